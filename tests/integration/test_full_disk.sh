#!/usr/bin/env bash
# label: integration
# timeout: 900
# cost: 90
# skip_return_code: 77
# A disk that fills up at any point of a run (docs/hpc.md, "A full disk"): a fill-level sweep over a
# short run that checkpoints every round and writes output.jsonl, on a small disk whose size grows 8 KB
# per level (1 rank and 2 ranks on alternate levels) until the run fits. Each level fails wherever
# its size runs out: in the results rows, inside HDF5's own writes and flushes of the checkpoint, in a
# checkpoint stuck at 2 ranks (the watchdog). The disk is fullest while a checkpoint is written beside
# the one before it, so the run's final writes (output.jsonl's last line, the results file's close,
# the rename), made when the disk holds less, are not where a level fails; on the shim's disk a run
# without checkpoints is bisected at its end for them (at the end). Every failing level must:
#  * exit 74 within 30 s (no hang, no signal; a write phase stuck inside parallel HDF5 is ended by the
#    storage watchdog after 10-13 s), print exactly one `fedsilo: error:` line that ends in
#    "No space left on device (<a file of the output>)", and no `done` line;
#  * leave nothing beside the last good checkpoint (no .partial, .ckpt.tmp, .lock, .jsonl.tmp, no
#    write-probe files);
#  * after space is freed, resume (--resume) to a results file and output.jsonl equal to those of an
#    uninterrupted run (h5_same: every dataset bit for bit but the wall times).
# The disk (lib/full_disk.sh): a small tmpfs as root, else a folder filled through an LD_PRELOAD shim,
# so that the sweep never skips for want of root; test_full_disk_shim runs it on the shim's disk even
# where a tmpfs can be mounted. On the shim's disk the stretch between the last two levels is bisected
# to 256 bytes as well (at the end).
TEST_NAME=test_full_disk
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/full_disk.sh"
RUN=(--dataset synthetic --clients 4 --model.hidden 8 --rounds 3 --checkpoint.every 1 --output.jsonl true)

"$MPIEXEC" -n 1 "$FEDSILO_EXE" "${RUN[@]}" --output "$WORK/ref.h5" >"$WORK/ref.log" 2>&1 ||
  { cat "$WORK/ref.log"; die "the uninterrupted run failed"; }

# leftovers: the files in the tmpfs but the results file, its .jsonl and the checkpoint.
leftovers() { ls -A "$MNT" | grep -vxE 'r\.h5|r\.h5\.jsonl|r\.h5\.ckpt' | tr '\n' ' ' || true; }

# run_level NP: one run at NP ranks on the disk as it is; sets rc and ms.
run_level() {
  rc=0
  local t0
  t0=$(now_ms)
  timeout -s KILL 60 "$MPIEXEC" -n "$1" "${FILL[@]}" "$FEDSILO_EXE" "${RUN[@]}" --output "$MNT/r.h5" >"$WORK/run.log" 2>&1 || rc=$?
  ms=$(($(now_ms) - t0))
}

# check_failed WHERE NP: the checks of a level whose run (run_level) failed, then the resume at NP ranks.
check_failed() {
  local where=$1 np=$2 errs left
  errs=$(grep 'fedsilo: error' "$WORK/run.log" || true)
  log "$where: exit $rc in $ms ms: $errs"
  ((rc == 74)) || { fail "$where: exit $rc, expected 74"; cat "$WORK/run.log"; }
  ((ms < 30000)) || fail "$where: took $ms ms, expected < 30 s"
  [ "$(grep -c . <<<"$errs")" = 1 ] || fail "$where: $(grep -c . <<<"$errs") error lines, expected 1"
  grep -qE "No space left on device \($MNT/r\.h5[^ ]*\)$" <<<"$errs" ||
    fail "$where: the error does not end in 'No space left on device (<file of the output>)'"
  grep -q '^done' "$WORK/run.log" && fail "$where: printed a done line"
  left=$(leftovers)
  [ -z "$left" ] || fail "$where: left behind: $left"
  # Space freed: the run resumes from the last good checkpoint (or starts over without one) and
  # ends where the uninterrupted run ended.
  disk_free_space
  rc=0
  timeout -s KILL 60 "$MPIEXEC" -n "$np" "${FILL[@]}" "$FEDSILO_EXE" "${RUN[@]}" --output "$MNT/r.h5" --resume \
    >"$WORK/resume.log" 2>&1 || rc=$?
  if ((rc != 0)); then
    fail "$where: the resumed run exited $rc"
    cat "$WORK/resume.log"
    return
  fi
  h5_same "$WORK/ref.h5" "$MNT/r.h5" || fail "$where: the resumed results differ from the uninterrupted run's"
  cmp -s <(sed 's/"seconds".*//' "$WORK/ref.h5.jsonl") <(sed 's/"seconds".*//' "$MNT/r.h5.jsonl") ||
    fail "$where: the resumed output.jsonl differs from the uninterrupted run's"
  left=$(ls -A "$MNT" | grep -vxE 'r\.h5|r\.h5\.jsonl' | tr '\n' ' ' || true)
  [ -z "$left" ] || fail "$where: the resumed run left: $left"
}

size=16 fitted=0 levels=0
while ((fitted == 0 && size <= 1024)); do
  np=$((1 + (size / 8) % 2))
  disk_make "$size"
  run_level "$np"
  levels=$((levels + 1))
  if ((rc == 0)); then
    fitted=1
    log "$size KB (-n $np): the run fits"
  else
    check_failed "$size KB (-n $np)" "$np"
  fi
  disk_drop
  size=$((size + 8))
done
((fitted == 1)) || fail "the run did not fit in 1 MB"
log "$levels fill levels, $((levels - 1)) of them full before the run's end"
((levels >= 10)) || fail "only $levels fill levels before the run fitted (expected the sweep to cover the run)"

# bisect LO HI WHAT: the shim's disk capacities between LO bytes (the run fails) and HI (it fits) are
# bisected to 256 bytes at 2 ranks, and each one that fails is checked as a level (check_failed);
# sets hi (the smallest capacity seen to fit) and found (the failing ones). Where exactly the run fits
# varies by a few hundred bytes from run to run (the wall times in output.jsonl, two ranks growing the
# files at once), so each failing run is checked as it happens, not run again.
bisect() {
  local lo=$1 mid
  hi=$2 found=0
  while ((hi - lo > 256)); do
    mid=$(((lo + hi) / 2))
    disk_make_bytes "$mid"
    run_level 2
    if ((rc == 0)); then
      hi=$mid
    else
      lo=$mid found=$((found + 1))
      check_failed "$mid bytes$3 (-n 2)" 2
    fi
    disk_drop
  done
}

# On the shim's disk (its capacity counts bytes, a tmpfs's 4 KB pages): between the last two levels.
# Then the run's final writes (the last rows and datasets, output.jsonl's last line, the results
# file's close, the strings rank 0 adds, the rename), where the disk is fullest only in a run without
# checkpoints (its files grow to the end): its capacities from 8 KB below the size of its output to
# 16 KB above.
if [ "$MODE" = shim ]; then
  bisect $(((size - 16) * 1024)) $(((size - 8) * 1024)) ""
  log "between the last two levels: $found capacities failed (checked), the run fitted from $hi bytes"
  RUN=(--dataset synthetic --clients 4 --model.hidden 8 --rounds 3 --output.jsonl true)
  disk_make 4096
  run_level 2
  ((rc == 0)) || { cat "$WORK/run.log"; die "the run without checkpoints failed on a 4 MB disk"; }
  used=$(du -bc "$MNT"/* | tail -1 | cut -f1)
  disk_drop
  bisect $((used - 8192)) $((used + 16384)) ", no checkpoints"
  log "a run without checkpoints ($used bytes of output): $found capacities failed (checked), it fitted from $hi bytes"
fi
finish
