#!/usr/bin/env bash
# N sweeps of one manifest side by side on this machine, sharing its tasks (jobs/local/sweep.sh with
# FEDSILO_SHARED=1: every task runs once, and a sweep that is done with a task takes the next free one):
#   jobs/local/sweeps.sh N MANIFEST
# Worth it when a run does not use its ranks well (docs/hpc.md, "Several runs side by side"). Each
# sweep runs its tasks with FEDSILO_RANKS ranks (default here 1) that the kernel places
# (FEDSILO_MPIRUN_ARGS, default here "--bind-to none"), and logs to
# <FEDSILO_OUT>/sweeps/<manifest file name>.<i>.log. Ctrl-C or `kill -TERM <pid of this script>`:
# every sweep's current run finishes its round, checkpoints and stops; the same command again continues.
# Exit status: 0 when every sweep finished its tasks, 75 when stopped, 1 when a task failed (see the logs).
set -euo pipefail
FEDSILO_ROOT=${FEDSILO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=common.sh
source "$FEDSILO_ROOT/jobs/local/common.sh"
[ $# -eq 2 ] || fedsilo_die "usage: jobs/local/sweeps.sh N MANIFEST"
N=$1
MANIFEST=$2
[[ "$N" =~ ^[1-9][0-9]*$ ]] || fedsilo_die "N = '$N': expected the number of sweeps, a positive integer"
[ -f "$MANIFEST" ] || fedsilo_die "no manifest $MANIFEST"
LOGS=${FEDSILO_OUT:-$FEDSILO_ROOT/out}/sweeps
mkdir -p "$LOGS"
export FEDSILO_SHARED=1 FEDSILO_RANKS=${FEDSILO_RANKS:-1} FEDSILO_MPIRUN_ARGS=${FEDSILO_MPIRUN_ARGS---bind-to none}

# Each sweep in a process group of its own (as fedsilo_run_forwarding starts a run), so that a
# terminal's Ctrl-C reaches this script alone, which asks every sweep to stop after its round.
PIDS=()
set -m
for i in $(seq 1 "$N"); do
  "$FEDSILO_ROOT/jobs/local/sweep.sh" "$MANIFEST" >"$LOGS/$(basename "$MANIFEST").$i.log" 2>&1 </dev/null &
  PIDS+=($!)
done
set +m
echo "sweeps.sh: $N sweeps of $MANIFEST (pids ${PIDS[*]}); logs $LOGS/$(basename "$MANIFEST").1..$N.log"
STOPPED=0
stop_sweeps() {
  STOPPED=1
  local p
  for p in "${PIDS[@]}"; do kill -USR1 "$p" 2>/dev/null || true; done
}
trap stop_sweeps USR1 TERM INT HUP

failed=0
interrupted=0
for i in "${!PIDS[@]}"; do
  fedsilo_wait_gone "${PIDS[$i]}"
  echo "sweeps.sh: sweep $((i + 1)) exited $WAIT_RC"
  if [ "$WAIT_RC" = 75 ] || { [ "$STOPPED" = 1 ] && [ "$WAIT_RC" != 0 ]; }; then
    interrupted=1 # a sweep asked to stop between two tasks ends by the signal itself, not with 75
  elif [ "$WAIT_RC" != 0 ]; then
    failed=1
  fi
done
[ "$failed" = 0 ] || exit 1
[ "$interrupted" = 0 ] || { echo "sweeps.sh: stopped; run the same command again to continue" >&2; exit 75; }
exit 0
