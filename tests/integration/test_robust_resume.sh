#!/usr/bin/env bash
# label: integration
# timeout: 300
# cost: 10
# Kill and resume with robust aggregation: centered clipping starts each round from the last round's
# aggregate (the one aggregator with state across rounds; checkpointed as robust/center), here under
# an IPM attack. An uninterrupted 2-rank run; the same run stopped by SIGTERM to its ranks (exit 75,
# checkpoint left); resumed at 1 rank: the results file equals the uninterrupted one in every dataset
# but wall times and the placement (a resume that restarted the centre from zeros would differ from
# round `stopped` on: the clip factors and the model).
TEST_NAME=test_robust_resume
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
A=("${TINY[@]}" --rounds 6 --seed 3 --fl.aggregator centered_clip --fl.clip_tau 0.05 --fl.clip_iterations 2
  --attack.kind ipm --attack.client_ids 1 --attack.epsilon 0.5)
"$MPIEXEC" -n 2 "$FEDSILO_EXE" "${A[@]}" --output "$WORK/ref.h5" >"$WORK/ref.log" 2>&1 ||
  die "uninterrupted run failed: $(tail -3 "$WORK/ref.log")"
# A 300 ms pause after each round (test-only fault) so that the signal lands between rounds 0 and 6.
FEDSILO_FAULT=slow:rank=0,ms=300 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${A[@]}" --output "$WORK/run.h5" >"$WORK/int.log" 2>&1 &
pid=$!
wait_for_line '^ *1 ' "$WORK/int.log" 120 "$pid" && signal_ranks TERM "$pid"
RC=0
wait "$pid" || RC=$?
[ "$RC" = 75 ] || die "interrupted run exited $RC, expected 75: $(tail -3 "$WORK/int.log")"
[ -f "$WORK/run.h5.ckpt" ] || die "no checkpoint after the stop"
stopped=$(sed -n 's/.*stopped before round \([0-9]*\).*/\1/p' "$WORK/int.log" | head -1)
[ -n "$stopped" ] && [ "$stopped" -ge 2 ] && [ "$stopped" -lt 6 ] || die "stopped before round '$stopped', expected 2-5"
"$MPIEXEC" -n 1 "$FEDSILO_EXE" "${A[@]}" --output "$WORK/run.h5" --resume >"$WORK/res.log" 2>&1 ||
  die "resumed run failed: $(tail -3 "$WORK/res.log")"
grep -q '^resuming from' "$WORK/res.log" || fail "the resumed run did not say it resumed"
if h5_same "$WORK/ref.h5" "$WORK/run.h5"; then
  log "centered_clip stopped before round $stopped at 2 ranks, resumed at 1: identical"
else
  fail "centered_clip: resumed results differ from the uninterrupted run (above)"
fi
finish
