#!/usr/bin/env bash
# label: integration
# timeout: 600
# cost: 15
# skip_return_code: 77
# A write stuck inside parallel HDF5 on a full disk, at the points the fill-level sweep
# (test_full_disk) reaches only by chance: while the results file is created and while a round's rows
# are written. FEDSILO_FAULT=stall (app/fault_injection.hpp) blocks one rank there for good, as a
# metadata write that failed on that rank only leaves it, on a disk (lib/full_disk.sh) of 512 KB: the
# run needs about 180 KB, the storage watchdog's write probe 1 MiB. Each case must end every rank
# with exit 74 within 30 s (the watchdog: 10 s on rank 0, 13 s on the others by default; here
# FEDSILO_FAULT's patience=3 makes that 3 s and 6 s: more than three times what the whole run takes
# when nothing is stuck (under 1 s on 2 loaded cores), so no phase but the stuck one is ended), print one
# `fedsilo: error:` line that says the phase did not complete (the watchdog's, not a failed write's)
# and ends in "No space left on device (<the partial results file>)", no `done` line, and leave
# nothing but <output>.jsonl (no results file, partial file, lock or write probe).
TEST_NAME=test_stuck_writes
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/full_disk.sh"
RUN=(--dataset synthetic --clients 4 --model.hidden 8 --rounds 3 --output.jsonl true)
DISK_KB=512

# stuck FAULT PHASE: one 2-rank run under FEDSILO_FAULT=FAULT, stuck in PHASE.
stuck() {
  local fault=$1 phase=$2 rc=0 t0 ms errs
  disk_make "$DISK_KB"
  t0=$(now_ms)
  FEDSILO_FAULT=$fault timeout -s KILL 60 "$MPIEXEC" -n 2 "${FILL[@]}" "$FEDSILO_EXE" "${RUN[@]}" \
    --output "$MNT/r.h5" >"$WORK/run.log" 2>&1 || rc=$?
  ms=$(($(now_ms) - t0))
  errs=$(grep 'fedsilo: error' "$WORK/run.log" || true)
  log "$fault: exit $rc in $ms ms: $errs"
  ((rc == 74)) || { fail "$fault: exit $rc, expected 74"; cat "$WORK/run.log"; }
  ((ms < 30000)) || fail "$fault: took $ms ms, expected < 30 s"
  [ "$(grep -c . <<<"$errs")" = 1 ] || fail "$fault: $(grep -c . <<<"$errs") error lines, expected 1"
  grep -qF "$phase did not complete in" <<<"$errs" || fail "$fault: the error does not name the phase '$phase'"
  grep -qE "No space left on device \($MNT/r\.h5\.partial\)$" <<<"$errs" ||
    fail "$fault: the error does not end in 'No space left on device ($MNT/r.h5.partial)'"
  grep -q '^done' "$WORK/run.log" && fail "$fault: printed a done line"
  local left
  left=$(find "$MNT" -mindepth 1 ! -name r.h5.jsonl -printf '%f ')
  [ -z "$left" ] || fail "$fault: left behind: $left"
  disk_drop
}

stuck stall:rank=1,round=-1,patience=3 "creating the results file"
stuck stall:rank=0,round=1,patience=3 "writing the results file"
finish
