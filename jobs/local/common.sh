# Shared by jobs/local/*.sh (mpirun on a workstation) and jobs/*.sbatch (srun under SLURM). Sourced.
# Batch scripts run from a copy in SLURM's spool directory, so they find this file through
# FEDSILO_ROOT (default: the directory sbatch was called from, which must be the repository root).
#   FEDSILO_EXE    the fedsilo binary (default: $FEDSILO_ROOT/build/fedsilo)
#   FEDSILO_OUT    output directory of sweeps and scaling runs (default: $FEDSILO_ROOT/out)

fedsilo_die() {
  echo "fedsilo job: error: $*" >&2
  exit 2
}

# The environment of a run, set inside the script so that it does not depend on the submitting shell's:
#   FEDSILO_ENV_HOOK  a file sourced first: a site's `module load` lines (the MPI, HDF5 and compilers
#                     fedsilo was built with), exports, ... (docs/hpc.md). A failing command in it stops
#                     the job, as in the script itself.
# then jobs/env.sh (one BLAS thread per rank; Open MPI's root and oversubscription switches only outside
# SLURM jobs, where they are mpirun's business), and one BLAS thread per rank whatever the caller had.
fedsilo_env() {
  if [ -n "${FEDSILO_ENV_HOOK:-}" ]; then
    [ -f "$FEDSILO_ENV_HOOK" ] || fedsilo_die "FEDSILO_ENV_HOOK=$FEDSILO_ENV_HOOK: no such file"
    echo "fedsilo job: sourcing FEDSILO_ENV_HOOK=$FEDSILO_ENV_HOOK"
    set +u # module(1) and site scripts read unset variables
    # shellcheck source=/dev/null
    source "$FEDSILO_ENV_HOOK"
    set -u
  fi
  # shellcheck source=../env.sh
  source "$FEDSILO_ROOT/jobs/env.sh"
  export OPENBLAS_NUM_THREADS=1
}

# fedsilo_srun_mpi: srun's option that starts the ranks with the MPI library's launch protocol:
# --mpi=$FEDSILO_SRUN_MPI, default pmix (Debian's Open MPI and SLURM meet in PMIx; `srun --mpi=list`
# shows a site's plugins). FEDSILO_SRUN_MPI= (set but empty) passes nothing, leaving the site's
# MpiDefault. With a plugin the MPI does not understand, srun starts every task as a separate one-rank
# run: Open MPI refuses to start, and fedsilo itself stops (exit 2) when its rank count is not SLURM_NTASKS.
fedsilo_srun_mpi() {
  local mpi=${FEDSILO_SRUN_MPI-pmix}
  [[ $mpi =~ ^[A-Za-z0-9_]*$ ]] ||
    fedsilo_die "FEDSILO_SRUN_MPI=$mpi: expected an srun MPI plugin name (srun --mpi=list)"
  if [ -n "$mpi" ]; then echo "--mpi=$mpi"; fi
}

fedsilo_exe() {
  local exe=${FEDSILO_EXE:-$FEDSILO_ROOT/build/fedsilo}
  [ -x "$exe" ] || fedsilo_die "no fedsilo binary at $exe (build it: bash jobs/setup.sh, or set FEDSILO_EXE)"
  echo "$exe"
}

# fedsilo_output CONFIG ARGS...: the results file the run will write, as fedsilo decides it: the
# last --output on the command line, else `output = ...` at the top of CONFIG, else results.h5.
fedsilo_output() {
  local config=$1 out="" prev=""
  shift
  for a in "$@"; do
    case "$a" in
      --output=*) out=${a#--output=} ;;
      *) [ "$prev" = --output ] && out=$a ;;
    esac
    prev=$a
  done
  if [ -z "$out" ] && [ -f "$config" ]; then
    # Top-level keys only: stop at the first [section].
    out=$(sed -n '/^[[:space:]]*\[/q; s/^[[:space:]]*output[[:space:]]*=[[:space:]]*\(.*[^[:space:]]\)[[:space:]]*$/\1/p' "$config" | tail -1)
  fi
  echo "${out:-results.h5}"
}

# fedsilo_has_output ARGS...: whether the arguments set --output themselves.
fedsilo_has_output() {
  for a in "$@"; do
    case "$a" in --output | --output=*) return 0 ;; esac
  done
  return 1
}

# fedsilo_resume_args OUTPUT: --resume when OUTPUT.ckpt exists (a requeued or re-submitted job
# continues where it stopped; fedsilo refuses, with exit code 2, a checkpoint of another configuration).
fedsilo_resume_args() {
  if [ -f "$1.ckpt" ]; then echo --resume; fi
}

# fedsilo_mpirun_command: sets MPIRUN to the launcher of the jobs/local/ scripts, mpirun with
# FEDSILO_MPIRUN_ARGS (split at blanks) and -n FEDSILO_RANKS (default 2). Open MPI binds each job's
# ranks in placement order from core 0 (with up to 2 ranks, one core each), so two jobs started side by
# side on one machine share the same cores while the others idle: FEDSILO_MPIRUN_ARGS="--bind-to none"
# leaves their placement to the kernel (docs/hpc.md).
fedsilo_mpirun_command() {
  local extra=()
  read -r -a extra <<<"${FEDSILO_MPIRUN_ARGS:-}"
  MPIRUN=(mpirun "${extra[@]}" -n "${FEDSILO_RANKS:-2}")
}

# fedsilo_claim OUTPUT: for sweeps that share a manifest (FEDSILO_SHARED=1): takes OUTPUT's task for this
# script (mkdir OUTPUT.claim, atomic, with "host pid" in OUTPUT.claim/owner) and returns 0, or returns 1
# when another sweep holds it. A claim left by a sweep that is gone (this host, no such process) is taken
# over; one from another host counts as held, since its process cannot be checked from here.
fedsilo_claim() {
  local dir=$1.claim host="" pid=""
  mkdir "$dir" 2>/dev/null && { echo "$(uname -n) $$" >"$dir/owner"; return 0; }
  read -r host pid <"$dir/owner" 2>/dev/null || return 1 # just made by another sweep, owner not written yet
  [ "$host" = "$(uname -n)" ] && [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null || return 1
  rm -rf "$dir"
  mkdir "$dir" 2>/dev/null || return 1 # another sweep took it over first
  echo "$(uname -n) $$" >"$dir/owner"
}

# fedsilo_claim_owner OUTPUT: the "host pid" holding OUTPUT's task, for messages.
fedsilo_claim_owner() {
  cat "$1.claim/owner" 2>/dev/null || echo "unknown"
}

# fedsilo_run_forwarding CMD...: runs CMD in the background and forwards stop signals to it, so that
# the run checkpoints at the end of the current round and exits 75:
#   SIGUSR1 (sbatch --signal=B:USR1@T before the walltime) -> USR1 to CMD (srun and mpirun forward it)
#   SIGTERM / SIGINT / SIGHUP -> USR1 to CMD: Open MPI's mpirun does not forward these; it aborts the
#   job instead (exit 1, the ranks killed about 2 s later; docs/hpc.md, Signals), but it forwards USR1,
#   and fedsilo treats both alike.
# CMD runs in a process group of its own, so that a signal to the script's group (a terminal's Ctrl-C
# or hangup) reaches the script alone, which forwards it; CMD's standard input is /dev/null, as for any
# background command of a script.
# Sets RUN_RC (CMD's exit status) and GOT_USR1 (1 if SIGUSR1 arrived).
fedsilo_run_forwarding() {
  GOT_USR1=0
  RUN_RC=0
  set -m # job control on: the next background command gets its own process group
  "$@" </dev/null &
  FEDSILO_CHILD=$!
  set +m
  trap 'GOT_USR1=1; kill -USR1 "$FEDSILO_CHILD" 2>/dev/null || true' USR1
  trap 'kill -USR1 "$FEDSILO_CHILD" 2>/dev/null || true' TERM INT HUP
  fedsilo_wait_gone "$FEDSILO_CHILD"
  RUN_RC=$WAIT_RC
  trap - USR1 TERM INT HUP
}

# fedsilo_wait_gone PID: waits until the background child PID has exited and sets WAIT_RC to its exit
# status. wait returns early (status > 128) when a trapped signal arrives; wait again until it is gone.
# Call it in the shell that started PID, never in a subshell: only that shell can wait for it.
fedsilo_wait_gone() {
  while :; do
    if wait "$1"; then WAIT_RC=0; else WAIT_RC=$?; fi
    kill -0 "$1" 2>/dev/null || break
  done
}

# fedsilo_task_done OUTPUT: whether OUTPUT's run has finished (its results file, no checkpoint left).
fedsilo_task_done() {
  [ -f "$1" ] && [ ! -f "$1.ckpt" ]
}

# fedsilo_file_stamp FILE: what tells one version of FILE from another (inode, modification time and
# size: fedsilo writes its files under other names and renames them into place), or "none".
fedsilo_file_stamp() {
  stat -c '%i %y %s' "$1" 2>/dev/null || echo none
}

# fedsilo_run_stamp OUTPUT: the versions of OUTPUT and OUTPUT.ckpt, taken before a launch for
# fedsilo_mpirun_status.
fedsilo_run_stamp() {
  echo "$(fedsilo_file_stamp "$1")|$(fedsilo_file_stamp "$1.ckpt")"
}

# fedsilo_mpirun_status OUTPUT STAMP: after fedsilo_run_forwarding mpirun ... --output OUTPUT, with
# STAMP = fedsilo_run_stamp OUTPUT before the launch. mpirun exits 1 when it gets SIGTERM, SIGINT or
# SIGHUP itself, whatever its ranks did in the time it gave them (docs/hpc.md, Signals). RUN_RC becomes
# what the run itself reported: 0 when it completed anyway (a new OUTPUT, no checkpoint or partial
# file), 75 when it stopped resumably (a new OUTPUT.ckpt, OUTPUT.partial kept, no OUTPUT: what fedsilo
# leaves when it exits 75, or after a periodic checkpoint when it was killed).
fedsilo_mpirun_status() {
  local output=$1 before=$2 now
  [ "$RUN_RC" = 1 ] || return 0
  now=$(fedsilo_run_stamp "$output")
  if [ -f "$output" ] && [ ! -e "$output.ckpt" ] && [ ! -e "$output.partial" ] && [ "${now%%|*}" != "${before%%|*}" ]; then
    echo "fedsilo job: mpirun exited 1 (it does when it gets SIGTERM, SIGINT or SIGHUP itself), but the run" \
      "completed: $output; exit 0" >&2
    RUN_RC=0
  elif [ -f "$output.ckpt" ] && [ -f "$output.partial" ] && [ ! -e "$output" ] && [ "${now#*|}" != "${before#*|}" ]; then
    echo "fedsilo job: mpirun exited 1 (it does when it gets SIGTERM, SIGINT or SIGHUP itself), but the run" \
      "stopped after writing $output.ckpt: exit 75, run the same command again to resume" >&2
    RUN_RC=75
  fi
}

# fedsilo_manifest_line FILE INDEX: the INDEX-th (0-based) task line of a sweep manifest (blank lines
# and # comments do not count).
fedsilo_manifest_line() {
  grep -v -e '^[[:space:]]*$' -e '^[[:space:]]*#' "$1" | sed -n "$(($2 + 1))p"
}
fedsilo_manifest_count() {
  grep -c -v -e '^[[:space:]]*$' -e '^[[:space:]]*#' "$1" || true
}

# fedsilo_sweep_output CONFIG ALGORITHM SEED [EXTRA...]: out/<config>_<algorithm>_s<seed>.h5, with
# the extra options appended when there are any (out/w1_fedprox_s0_fedprox.mu-0.01.h5), so that
# every task of a sweep has its own file.
fedsilo_sweep_output() {
  local path
  fedsilo_sweep_output_to path "$@"
  echo "$path"
}

# fedsilo_sweep_output_to VAR CONFIG ALGORITHM SEED [EXTRA...]: the same path into the variable VAR,
# without the subshell of $(fedsilo_sweep_output ...) (for loops over a whole manifest).
fedsilo_sweep_output_to() {
  local -n _fso_path=$1
  shift
  local base tag="" a
  base=${1##*/}
  for a in "${@:4}"; do
    a=${a#--}
    tag+="${tag:+-}${a//[^A-Za-z0-9._=-]/_}"
  done
  _fso_path="${FEDSILO_OUT:-$FEDSILO_ROOT/out}/${base%.ini}_$2_s$3${tag:+_$tag}.h5"
}

# fedsilo_seconds_per_round FILE: /summary/seconds_per_round of a results file.
fedsilo_seconds_per_round() {
  /usr/bin/python3 -c 'import sys, h5py; print(repr(float(h5py.File(sys.argv[1], "r")["summary/seconds_per_round"][()])))' "$1"
}

# fedsilo_client_samples FILE: every client's samples (train + val + test) in a results file, one line.
fedsilo_client_samples() {
  /usr/bin/python3 -c 'import sys, h5py
c = h5py.File(sys.argv[1], "r")["clients"]
print(" ".join(str(int(a + b + t)) for a, b, t in zip(c["num_train"][:], c["num_val"][:], c["num_test"][:])))' "$1"
}

# fedsilo_all_clients_hold FILE N: whether every client of the results file holds exactly N samples.
fedsilo_all_clients_hold() {
  local sizes
  sizes=$(fedsilo_client_samples "$1") || return 1
  [ -n "$sizes" ] && [ -z "$(tr ' ' '\n' <<<"$sizes" | grep -vx -- "$2")" ]
}

# fedsilo_scaling LAUNCH CONFIG [fedsilo options...]: strong and weak scaling runs.
# LAUNCH is a function called as `LAUNCH NP CMD...` (srun -n NP / mpirun -n NP).
#   FEDSILO_SCALING_RANKS     rank counts (default "1 2 4 ... N", N = FEDSILO_SCALING_MAX)
#   FEDSILO_SCALING_MODES     "strong weak" (default both)
#   FEDSILO_STRONG_CLIENTS    clients of every strong-scaling run (default 16): the config's data and
#                             partition, the same problem at every rank count
#   FEDSILO_WEAK_CLIENTS      clients per rank of the weak-scaling runs (default 4)
#   FEDSILO_WEAK_SAMPLES      samples of every client in the weak-scaling runs (default: FashionMNIST's
#                             60,000 training images shared by the largest run, 60000 / (clients per
#                             rank x the largest rank count)); the weak runs use an iid partition capped
#                             at this many samples per client, so the work per rank is the same at every
#                             rank count, and a run in which a client got fewer (too small a data set)
#                             is reported and left out
#   FEDSILO_SCALING_CSV       the CSV written (default $FEDSILO_OUT/scaling.csv)
# Writes mode,ranks,clients,seconds_per_round (the columns `tools/fedsilo-analysis plot scaling` reads),
# seconds_per_round being each run's /summary/seconds_per_round (median round time). A failed run is
# reported and left out; the function then returns 1.
fedsilo_scaling() {
  local launch=$1 config=$2
  shift 2
  local exe out csv dir ranks modes p mode k file failed=0 sec maxp per_rank samples extra
  exe=$(fedsilo_exe)
  out=${FEDSILO_OUT:-$FEDSILO_ROOT/out}
  csv=${FEDSILO_SCALING_CSV:-$out/scaling.csv}
  dir=$out/scaling
  mkdir -p "$dir" "$(dirname "$csv")"
  if [ -n "${FEDSILO_SCALING_RANKS:-}" ]; then
    ranks=$FEDSILO_SCALING_RANKS
  else
    ranks=""
    for ((p = 1; p < ${FEDSILO_SCALING_MAX:-1}; p *= 2)); do ranks+="$p "; done
    ranks+=${FEDSILO_SCALING_MAX:-1}
  fi
  modes=${FEDSILO_SCALING_MODES:-strong weak}
  maxp=0
  for p in $ranks; do ((p > maxp)) && maxp=$p; done
  per_rank=${FEDSILO_WEAK_CLIENTS:-4}
  samples=${FEDSILO_WEAK_SAMPLES:-$((60000 / (per_rank * (maxp > 0 ? maxp : 1))))}
  [[ $samples =~ ^[1-9][0-9]*$ ]] || fedsilo_die "FEDSILO_WEAK_SAMPLES must be a positive integer, got '$samples'"
  fedsilo_has_output "$@" && fedsilo_die "scaling names its own outputs; remove --output"
  echo "mode,ranks,clients,seconds_per_round" >"$csv"
  for mode in $modes; do
    for p in $ranks; do
      case "$mode" in
        strong) k=${FEDSILO_STRONG_CLIENTS:-16} extra=() ;;
        weak)
          k=$((p * per_rank))
          extra=(--partition.scheme iid --partition.samples_per_client "$samples")
          ;;
        *) fedsilo_die "FEDSILO_SCALING_MODES: unknown mode $mode (strong, weak)" ;;
      esac
      file=$dir/${mode}_p${p}_k${k}.h5
      rm -f "$file"
      echo "== $mode scaling: $p rank(s), $k clients${extra:+ of $samples samples each} -> $file"
      if ! "$launch" "$p" "$exe" --config "$config" "$@" --clients "$k" "${extra[@]}" --output "$file" ||
        ! sec=$(fedsilo_seconds_per_round "$file"); then
        echo "fedsilo scaling: the $mode run at $p rank(s) failed; left out of $csv" >&2
        failed=1
      elif [ "$mode" = weak ] && ! fedsilo_all_clients_hold "$file" "$samples"; then
        echo "fedsilo scaling: in the weak run at $p rank(s) not every client holds $samples samples" \
          "($(fedsilo_client_samples "$file" 2>&1)): the data set is too small for $k clients; lower" \
          "FEDSILO_WEAK_SAMPLES. Left out of $csv" >&2
        failed=1
      else
        echo "$mode,$p,$k,$sec" >>"$csv"
        echo "   seconds per round: $sec"
      fi
    done
  done
  echo "scaling results: $csv"
  return "$failed"
}
