# Shared by the bench scripts: sourced right after they set ROOT (the repository root), before their
# option parsing. Errors name the script ($BENCH_NAME) and exit 2 for a bad command line, 1 for a
# failed run.
BENCH_NAME=$(basename "$0")

# bench_help: the script's header comment (line 2 up to its first line that is not a comment), which
# is its --help.
bench_help() {
  sed -n '2,/^[^#]/{/^#/p}' "$0"
}

# bench_usage_error MESSAGE...: a bad command line.
bench_usage_error() {
  echo "$BENCH_NAME: $*" >&2
  exit 2
}

bench_unknown_option() {
  bench_usage_error "unknown option $1 (see --help)"
}

# bench_positive_integers NAME...: each variable NAME holds a positive integer (reported as name in
# lower case, the option's spelling).
bench_positive_integers() {
  local v
  for v in "$@"; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || bench_usage_error "${v,,} must be a positive integer, got '${!v}'"
  done
}

# bench_workload_choice VALUE: --only's value, empty (every workload) or one of w1, w2, pfl.
bench_workload_choice() {
  case "$1" in "" | w1 | w2 | pfl) ;; *) bench_usage_error "--only w1|w2|pfl, got '$1'" ;; esac
}

# use_build: makes BUILD absolute, sets EXE to its fedsilo executable (which must exist) and PY to
# Debian's python3 (numpy, h5py, torch: a pyenv python3 earlier on PATH does not see them).
use_build() {
  BUILD=$(cd "$BUILD" && pwd)
  EXE=$BUILD/fedsilo
  PY=/usr/bin/python3
  [ -x "$EXE" ] || { echo "no fedsilo executable at $EXE (build first, or pass --build DIR)" >&2; exit 2; }
}

# bench_torch_workloads [--no-torch]: what the fedsilo-against-PyTorch benchmarks share: Debian's
# python3-torch (installed when missing and running as root; not with --no-torch, where PyTorch does
# not run), the reference program TORCH, and the W1 workload's configuration CONFIG and stored
# partition PART, which every workload starts from.
bench_torch_workloads() {
  if [ "${1:-}" != --no-torch ]; then
    # shellcheck source=jobs/packages.sh
    source "$ROOT/jobs/packages.sh"
    fedsilo_install_missing "$BENCH_NAME" python3-torch || exit 2
  fi
  TORCH=$ROOT/bench/torch_reference.py
  PART=$ROOT/data/partitions/fmnist_c10_dirichlet0.5_seed0.npy
  CONFIG=$ROOT/configs/w1_fedavg_fmnist.ini
}

# bench_out_dir KIND: OUT (the --out given, else out/bench/KIND-<time>) created and made absolute.
bench_out_dir() {
  OUT=${OUT:-$ROOT/out/bench/$1-$(date +%Y%m%d-%H%M%S)}
  mkdir -p "$OUT"
  OUT=$(cd "$OUT" && pwd)
}

# bench_mpi_env: the ranks' environment (jobs/env.sh: MPI as root, oversubscription allowed,
# OPENBLAS_NUM_THREADS=1 per rank), from the repository root, where the configurations' relative
# paths start.
bench_mpi_env() {
  # shellcheck source=jobs/env.sh
  source "$ROOT/jobs/env.sh"
  cd "$ROOT"
}

# bench_failed WHAT LOG: a run failed; its log's last lines, exit 1.
bench_failed() {
  echo "$1 failed, see $2" >&2
  tail -5 "$2" >&2
  exit 1
}

bench_load_average_at_end() {
  echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
}
