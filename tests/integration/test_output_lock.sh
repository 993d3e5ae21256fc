#!/usr/bin/env bash
# label: integration
# timeout: 600
# cost: 21
# One writer per output (docs/hpc.md, "One writer per output"):
#  * two concurrent 2-rank runs with the same --output: the first is paced (FEDSILO_FAULT=slow); the
#    second, with another seed, exits 2 within seconds naming the first's pid (one of the first
#    mpirun's ranks) and host, touches none of its files (the first's .partial is still there while it
#    runs), and the first finishes with exit 0 and a file equal to an uninterrupted run; --dry-run is
#    refused the same way while the first runs;
#  * a run killed with SIGKILL leaves <output>.lock behind, and that file blocks nothing: --resume
#    finishes with the uninterrupted result, and no lock file is left after a completed run.
TEST_NAME=test_output_lock
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
cd "$WORK"

BASE=("${TINY[@]}" --rounds 8 --seed 1)
run() {  # run LOG NP ARGS...: sets RC
  local logf=$1 np=$2
  shift 2
  RC=0
  "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "$@" >"$logf" 2>&1 || RC=$?
}

run ref.log 2 "${BASE[@]}" --output ref.h5
[ "$RC" = 0 ] || die "uninterrupted run exited $RC: $(tail -3 ref.log)"
[ ! -e ref.h5.lock ] || fail "a completed run left ref.h5.lock"

# ---- two runs, one output ------------------------------------------------------------------------
FEDSILO_FAULT=slow:rank=0,ms=1500 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${BASE[@]}" --output r.h5 >a.log 2>&1 &
first=$!
wait_for_line 'round +global_acc' a.log 120 "$first" || die "the first run did not start: $(tail -3 a.log)"
holder=$(cat r.h5.lock)
ranks=$(pgrep -P "$first" | tr '\n' ' ')
log "r.h5.lock: $holder (the first run's ranks: $ranks)"
holder_pid=$(sed -n 's/^pid \([0-9]*\) on host .*/\1/p' <<<"$holder")
[ -n "$holder_pid" ] && grep -qw "$holder_pid" <<<"$ranks" || fail "r.h5.lock names pid '$holder_pid', not a rank of the first run ($ranks)"
t0=$(now_ms)
run b.log 2 "${TINY[@]}" --rounds 5 --seed 2 --output r.h5
dt=$(($(now_ms) - t0))
kill -0 "$first" 2>/dev/null || fail "the first run ended before the second was refused: the test proves nothing"
[ "$RC" = 2 ] || fail "the second run exited $RC, expected 2: $(grep -m1 'error' b.log)"
msg=$(grep -m1 'fedsilo: error' b.log || true)
grep -q "another fedsilo run is writing it (pid $holder_pid on host $(hostname)" <<<"$msg" ||
  fail "the refusal does not name pid $holder_pid on $(hostname): $msg"
[ "$(grep -c 'fedsilo: error' b.log)" = 1 ] || fail "the refusal is not one line: $(cat b.log)"
((dt < 20000)) || fail "the second run took $dt ms to be refused"
[ -f r.h5.partial ] || fail "r.h5.partial of the first run is gone after the second run was refused"
[ ! -e r.h5 ] || fail "r.h5 exists while the first run is still running"
run dry.log 1 "${TINY[@]}" --rounds 5 --output r.h5 --dry-run
kill -0 "$first" 2>/dev/null || fail "the first run ended before the dry run: the test proves nothing"
[ "$RC" = 2 ] && grep -q "pid $holder_pid on host" dry.log || fail "--dry-run during the first run: exit $RC, expected 2 naming pid $holder_pid: $(grep -m1 error dry.log)"
RC=0
wait "$first" || RC=$?
[ "$RC" = 0 ] || fail "the first run exited $RC after the second was refused: $(tail -3 a.log)"
h5_same ref.h5 r.h5 || fail "the first run's r.h5 differs from the uninterrupted run"
[ ! -e r.h5.lock ] || fail "the first run left r.h5.lock"
log "second run refused in $dt ms: $msg"

# ---- a SIGKILLed run's lock file blocks nothing --------------------------------------------------
FEDSILO_FAULT=slow:rank=0,ms=500 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${BASE[@]}" --checkpoint.every 1 --output k.h5 >k.log 2>&1 &
victim=$!
wait_for_line 'checkpoint before round 2' k.log 120 "$victim" || die "no checkpoint: $(tail -3 k.log)"
signal_ranks KILL "$victim" || true
kill -KILL "$victim" 2>/dev/null || true
wait "$victim" 2>/dev/null || true
[ -f k.h5.lock ] || fail "the killed run left no k.h5.lock (the case is not tested)"
[ -f k.h5.ckpt ] || die "the killed run left no checkpoint"
run resume.log 2 "${BASE[@]}" --checkpoint.every 1 --output k.h5 --resume
[ "$RC" = 0 ] || fail "--resume after SIGKILL exited $RC: $(grep -m1 error resume.log)"
grep -q 'resuming from k.h5.ckpt' resume.log || fail "--resume did not resume from the checkpoint"
h5_same ref.h5 k.h5 || fail "the resumed k.h5 differs from the uninterrupted run"
[ ! -e k.h5.lock ] || fail "the resumed run left k.h5.lock"
finish
