# Shared by the HPC integration tests (test_resume, test_failures, test_participation, test_fuzz,
# test_slurm). Sourced, not run: it lives in lib/ so that tests/CMakeLists.txt does not register it.
# Needs the environment ctest sets: FEDSILO_EXE, FEDSILO_SOURCE_DIR, MPIEXEC.
set -euo pipefail
: "${FEDSILO_EXE:?FEDSILO_EXE is not set: run this test through ctest (cd build && ctest -R NAME)}"
: "${FEDSILO_SOURCE_DIR:?FEDSILO_SOURCE_DIR is not set: run this test through ctest}"
MPIEXEC=${MPIEXEC:-mpirun}
# shellcheck source=../../../jobs/env.sh
source "$FEDSILO_SOURCE_DIR/jobs/env.sh"
PY=/usr/bin/python3

# The tiny experiment of every HPC test: FashionMNIST, 100 samples per client, 4 clients, MLP 32.
TINY=(--dataset fashion_mnist --partition.samples_per_client 100 --clients 4 --model.hidden 32)

FAILURES=0
log() { printf '%s: %s\n' "${TEST_NAME:-test}" "$*"; }
fail() {
  printf '%s: FAIL: %s\n' "${TEST_NAME:-test}" "$*" >&2
  FAILURES=$((FAILURES + 1))
}
die() {
  printf '%s: FAIL: %s\n' "${TEST_NAME:-test}" "$*" >&2
  exit 1
}
now_ms() { local us=${EPOCHREALTIME/[.,]/}; echo $((us / 1000)); }  # bash's clock: no `date` process

# A fresh work directory, removed on exit (also on failure).
make_workdir() {
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/fedsilo-${TEST_NAME:-test}.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
}

# pause SECONDS: a sleep without a process: `read` times out on a FIFO that this shell holds open
# for reading and writing, so nothing ever arrives (the polling loop below runs 50 times a second).
PAUSE_FD=
pause() {
  if [ -z "$PAUSE_FD" ]; then
    local fifo
    fifo=$(mktemp -u "${TMPDIR:-/tmp}/fedsilo-pause.XXXXXX")
    mkfifo "$fifo"
    exec {PAUSE_FD}<>"$fifo"
    rm -f "$fifo"
  fi
  local nothing
  read -r -t "$1" -u "$PAUSE_FD" nothing || true
}

# file_has_line PATTERN FILE: FILE has a line matching PATTERN (an extended regular expression, as
# grep -E's), read by the shell itself.
file_has_line() {
  local line
  [ -r "$2" ] || return 1
  while IFS= read -r line || [ -n "$line" ]; do
    [[ $line =~ $1 ]] && return 0
  done <"$2"
  return 1
}

# wait_for_line PATTERN FILE TIMEOUT_S PID: waits until FILE has a line matching PATTERN (grep -E);
# returns 1 if PID exits first or the time runs out. Polls every 20 ms without starting a process,
# so that a test waiting for a run costs next to nothing of the CPU that run needs.
wait_for_line() {
  local pattern=$1 file=$2 timeout=$3 pid=$4 t0=${EPOCHREALTIME/[.,]/}
  until file_has_line "$pattern" "$file"; do
    kill -0 "$pid" 2>/dev/null || return 1
    ((${EPOCHREALTIME/[.,]/} - t0 < timeout * 1000000)) || return 1
    pause 0.02
  done
}

# signal_ranks SIG MPIRUN_PID: sends SIG to the ranks (mpirun's children) directly. Open MPI 4.1's
# mpirun does NOT forward SIGTERM (it sends SIGCONT, waits odls_base_sigkill_timeout, then SIGTERM,
# then SIGKILL); it does forward SIGUSR1/SIGUSR2 (docs/hpc.md).
signal_ranks() {
  local sig=$1 pid=$2 kids
  kids=$(pgrep -P "$pid" || true)
  [ -n "$kids" ] || return 1
  # shellcheck disable=SC2086
  kill -"$sig" $kids
}

# h5_complete FILE: a readable fedsilo results file with /summary and /model/global.
h5_complete() {
  "$PY" - "$1" <<'PYEOF'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    assert f.attrs["format"] in (b"fedsilo-results-1", "fedsilo-results-1"), "format attribute"
    for k in ("summary/client_accuracy", "summary/mean", "model/global", "rounds/client_accuracy"):
        assert k in f, "missing /" + k
    T = f["rounds/round"].shape[0]
    assert T >= 1 and f["rounds/client_accuracy"].shape[0] == T
PYEOF
}

# h5_same A B: every dataset equal (NaN == NaN) except wall times and the rank placement, which
# legitimately differ between runs (and rank counts). Prints the differences.
h5_same() {
  "$PY" - "$1" "$2" <<'PYEOF'
import sys, h5py, numpy as np
SKIP = {"rounds/seconds", "rounds/train_seconds", "summary/seconds_per_round", "clients/rank"}
def items(f):
    out = {}
    f.visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
    return out
with h5py.File(sys.argv[1], "r") as fa, h5py.File(sys.argv[2], "r") as fb:
    a, b = items(fa), items(fb)
bad = []
for k in sorted(set(a) | set(b)):
    if k in SKIP:
        continue
    if k not in a or k not in b:
        bad.append(f"/{k}: only in {'first' if k in a else 'second'} file")
        continue
    x, y = np.asarray(a[k]), np.asarray(b[k])
    if x.shape != y.shape:
        bad.append(f"/{k}: shape {x.shape} vs {y.shape}")
    elif x.dtype.kind in "fc":
        if not np.array_equal(x, y, equal_nan=True):
            i = np.argwhere(~((x == y) | (np.isnan(x) & np.isnan(y))))[0]
            bad.append(f"/{k}: differs, first at {tuple(i)}: {x[tuple(i)]!r} vs {y[tuple(i)]!r}")
    elif not np.array_equal(x, y):
        bad.append(f"/{k}: differs")
for m in bad:
    print("   ", m)
sys.exit(1 if bad else 0)
PYEOF
}

# The algorithm registry, from the "Algorithms:" section of --help (one "  name: summary" per line).
algorithms() {
  "$FEDSILO_EXE" --help | sed -n '/^Algorithms:/,/^$/p' | sed -n 's/^  \([A-Za-z0-9_]*\):.*/\1/p'
}

finish() {
  if ((FAILURES > 0)); then
    printf '%s: %d failure(s)\n' "${TEST_NAME:-test}" "$FAILURES" >&2
    exit 1
  fi
  log "passed"
}
