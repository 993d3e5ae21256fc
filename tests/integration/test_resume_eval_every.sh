#!/usr/bin/env bash
# label: integration
# timeout: 300
# cost: 30
# Kill-and-resume with eval.every > 1: /rounds holds one row per round, the rows of the rounds not
# evaluated carry NaN evaluation entries, and a resumed run must still give a file identical to the
# uninterrupted one, both when the partial file is re-opened (SIGTERM: closed cleanly at the
# checkpoint) and when it is rebuilt from the rows kept in the checkpoint (SIGKILL after a periodic
# checkpoint). test_resume covers every algorithm at eval.every = 1.
TEST_NAME=test_resume_eval_every
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir

# Rounds 0..5, evaluated: 0, 3 and the last (5); not evaluated: 1, 2, 4.
A=("${TINY[@]}" --algorithm fedavg --rounds 6 --eval.every 3 --seed 3)
SLOW=slow:rank=0,ms=300 # a pause after each round so that the signal lands mid-run

"$MPIEXEC" -n 2 "$FEDSILO_EXE" "${A[@]}" --output "$WORK/ref.h5" >"$WORK/ref.log" 2>&1 ||
  die "uninterrupted run failed: $(tail -3 "$WORK/ref.log")"
"$PY" - "$WORK/ref.h5" <<'PYEOF' || fail "uninterrupted run: not one row per round with NaN in the rounds not evaluated"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    r = f["rounds"]
    assert list(r["round"][:]) == list(range(6)), r["round"][:]
    acc = r["client_accuracy"][:]
    assert np.isnan(acc[[1, 2, 4]]).all() and np.isfinite(acc[[0, 3, 5]]).all(), acc
    assert np.isfinite(r["weight"][:]).all() and (r["weight"][:].sum(axis=1) > 0.999).all()
PYEOF

# start_slow LOG OUT ARGS...: a 2-rank run with the per-round pause, in the background (PID in $PID).
start_slow() {
  local logf=$1 out=$2
  shift 2
  FEDSILO_FAULT=$SLOW "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${A[@]}" "$@" --output "$out" >"$logf" 2>&1 &
  PID=$!
}

# resume_and_compare OUT WHAT PATTERN: resumes at 3 ranks; the log must match PATTERN (which way the
# partial file was handled) and the result must equal the uninterrupted run.
resume_and_compare() {
  local out=$1 what=$2 pattern=$3 rc=0
  "$MPIEXEC" -n 3 "$FEDSILO_EXE" "${A[@]}" "${@:4}" --output "$out" --resume >"$out.res.log" 2>&1 || rc=$?
  [ "$rc" = 0 ] || { fail "$what: resumed run exited $rc: $(tail -3 "$out.res.log")"; return; }
  grep -q "$pattern" "$out.res.log" || fail "$what: expected '$pattern' in the resume log"
  h5_complete "$out" || { fail "$what: resumed file incomplete"; return; }
  h5_same "$WORK/ref.h5" "$out" && log "$what: identical to the uninterrupted run" ||
    fail "$what: resumed results differ from the uninterrupted run (above)"
}

# SIGTERM after round 1 (not evaluated) finished: stops at the end of the current round, the partial
# file is closed at the checkpoint and re-opened (and truncated to the checkpoint's rows) on resume.
start_slow "$WORK/term.log" "$WORK/term.h5"
if wait_for_line '^ +1 +- ' "$WORK/term.log" 120 "$PID"; then signal_ranks TERM "$PID" || true; fi
rc=0
wait "$PID" || rc=$?
if [ "$rc" = 75 ] && [ -f "$WORK/term.h5.ckpt" ] && [ -f "$WORK/term.h5.partial" ]; then
  log "SIGTERM: $(grep -o 'stopped before round [0-9]*' "$WORK/term.log")"
  resume_and_compare "$WORK/term.h5" "SIGTERM, eval.every 3" 'partial file re-opened'
else
  fail "SIGTERM run: exit $rc (expected 75 with a checkpoint and a partial file): $(tail -3 "$WORK/term.log")"
fi

# SIGKILL after the periodic checkpoint before round 2 (rows 0 and 1, row 1 not evaluated): the
# partial file may be damaged, so the resume rebuilds it from the rows kept in the checkpoint.
start_slow "$WORK/kill.log" "$WORK/kill.h5" --checkpoint.every 2
if wait_for_line '^checkpoint before round 2' "$WORK/kill.log" 120 "$PID"; then signal_ranks KILL "$PID" || true; fi
rc=0
wait "$PID" || rc=$?
if [ "$rc" != 0 ] && [ -f "$WORK/kill.h5.ckpt" ] && [ ! -e "$WORK/kill.h5" ]; then
  resume_and_compare "$WORK/kill.h5" "SIGKILL after a periodic checkpoint, eval.every 3" 'rebuilt from the checkpoint' \
    --checkpoint.every 2
else
  fail "SIGKILL run: exit $rc, finished before the kill or no checkpoint: $(tail -3 "$WORK/kill.log")"
fi
finish
