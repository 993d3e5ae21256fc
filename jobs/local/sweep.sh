#!/usr/bin/env bash
# Every task of a sweep manifest ("CONFIG ALGORITHM SEED [fedsilo options...]" per line, as for
# jobs/sweep.sbatch), one after the other with mpirun -n FEDSILO_RANKS (default 2; more mpirun options
# in FEDSILO_MPIRUN_ARGS, e.g. "--bind-to none" for two sweeps side by side, docs/hpc.md), each into
# out/<config>_<algorithm>_s<seed>[_<options>].h5. Finished tasks (results file present) are skipped,
# interrupted ones resumed, so the script can simply be run again. Ctrl-C stops after the current
# round of the current task (exit 75). FEDSILO_TASKS="0 3" runs only those task indices.
# FEDSILO_SHARED=1 lets several sweeps of one manifest run side by side (one rank each, say, with
# FEDSILO_MPIRUN_ARGS="--bind-to none": docs/hpc.md): each task is claimed before it runs
# (OUTPUT.claim), a task another sweep holds is skipped, so every task runs once and a sweep that
# finishes early takes the next free one. CONFIG is
# relative to the current directory. The example manifest (quickstart, fedavg and local, 2 seeds),
# from the repository root:
#   jobs/local/sweep.sh jobs/sweep.manifest
set -euo pipefail
FEDSILO_ROOT=${FEDSILO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=common.sh
source "$FEDSILO_ROOT/jobs/local/common.sh"
[ $# -eq 1 ] || fedsilo_die "usage: jobs/local/sweep.sh MANIFEST"
MANIFEST=$1
[ -f "$MANIFEST" ] || fedsilo_die "no manifest $MANIFEST"
fedsilo_env
EXE=$(fedsilo_exe)
fedsilo_mpirun_command
N=$(fedsilo_manifest_count "$MANIFEST")
CLAIMED="" # the output whose task this sweep holds (FEDSILO_SHARED=1), released however the script ends
release_claim() {
  if [ -n "$CLAIMED" ]; then rm -rf "$CLAIMED.claim"; fi
  CLAIMED=""
}
trap release_claim EXIT
failed=0
for i in ${FEDSILO_TASKS:-$(seq 0 $((N - 1)))}; do
  # shellcheck disable=SC2207
  LINE=($(fedsilo_manifest_line "$MANIFEST" "$i"))
  if [ "${#LINE[@]}" -lt 3 ]; then
    echo "sweep: task $i: expected 'CONFIG ALGORITHM SEED [options]', got '${LINE[*]}'" >&2
    failed=1
    continue
  fi
  EXTRA=("${LINE[@]:3}")
  OUTPUT=$(fedsilo_sweep_output "${LINE[0]}" "${LINE[1]}" "${LINE[2]}" "${EXTRA[@]}")
  if fedsilo_task_done "$OUTPUT"; then
    echo "== task $i: $OUTPUT exists, skipped"
    continue
  fi
  mkdir -p "$(dirname "$OUTPUT")"
  if [ "${FEDSILO_SHARED:-0}" = 1 ]; then
    if ! fedsilo_claim "$OUTPUT"; then
      echo "== task $i: claimed by another sweep ($(fedsilo_claim_owner "$OUTPUT")), skipped"
      continue
    fi
    CLAIMED=$OUTPUT
    # another sweep may have finished it between the check above and the claim
    if fedsilo_task_done "$OUTPUT"; then
      release_claim
      echo "== task $i: $OUTPUT exists, skipped"
      continue
    fi
  fi
  RESUME=$(fedsilo_resume_args "$OUTPUT")
  STAMP=$(fedsilo_run_stamp "$OUTPUT")
  echo "== task $i/$N: ${LINE[*]} -> $OUTPUT $RESUME"
  # shellcheck disable=SC2086
  fedsilo_run_forwarding "${MPIRUN[@]}" "$EXE" --config "${LINE[0]}" --algorithm "${LINE[1]}" \
    --seed "${LINE[2]}" "${EXTRA[@]}" --output "$OUTPUT" $RESUME
  fedsilo_mpirun_status "$OUTPUT" "$STAMP"
  release_claim
  if [ "$RUN_RC" = 75 ]; then
    echo "sweep: interrupted in task $i; run the same command again to continue" >&2
    exit 75
  fi
  if [ "$RUN_RC" != 0 ]; then
    echo "sweep: task $i failed (exit $RUN_RC)" >&2
    failed=1
  fi
done
exit "$failed"
