#!/usr/bin/env bash
# label: integration
# timeout: 600
# cost: 58
# Checkpoints and the re-opened partial results file are verified by checksums (docs/hpc.md,
# "Integrity checks"). A 2-rank run stopped by SIGTERM after round 1 leaves <output>.ckpt and
# <output>.partial; then, each on a fresh copy:
#  * bytes flipped inside the stored values of the global model (/replicated/driver/global) and of
#    the last client's row of a per-client array (read by rank 1 only): --resume exits 1 naming the
#    checkpoint and the array, in one error line, and leaves the checkpoint byte for byte as it was;
#  * a same-size .partial with bytes flipped inside /rounds/client_accuracy: --resume exits 1 naming
#    the partial file, leaves it and the checkpoint as they were and publishes nothing; once the file
#    is removed, --resume rebuilds the results from the checkpoint, equal to the uninterrupted run;
#  * an intact .partial is re-opened; a resumed run that re-opened it and was then killed (SIGKILL)
#    changed it legitimately: the next --resume rebuilds it, equal to the uninterrupted run.
TEST_NAME=test_integrity
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
cd "$WORK"

BASE=("${TINY[@]}" --rounds 6 --seed 3)
"$MPIEXEC" -n 2 "$FEDSILO_EXE" "${BASE[@]}" --output ref.h5 >ref.log 2>&1 || die "uninterrupted run failed: $(tail -3 ref.log)"

# stopped DIR: a run stopped by SIGTERM (to its ranks) after its first round, in DIR.
stopped() {
  mkdir -p "$1"
  cd "$1"  # (not a subshell: the signal goes to the children of mpirun itself)
  FEDSILO_FAULT=slow:rank=0,ms=400 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${BASE[@]}" --output r.h5 >stop.log 2>&1 &
  local pid=$!
  wait_for_line '^ +0 ' stop.log 120 "$pid" || true
  signal_ranks TERM "$pid" || true
  local rc=0
  wait "$pid" || rc=$?
  cd "$WORK"
  [ "$rc" = 75 ] && [ -f "$1/r.h5.ckpt" ] && [ -f "$1/r.h5.partial" ] || die "the stopped run exited $rc: $(tail -3 "$1/stop.log")"
}

# flip FILE DATASET OFFSET: xors 8 bytes inside the stored data of DATASET, from byte OFFSET of its
# data on (contiguous or first chunk); the file keeps its size.
flip() {
  "$PY" - "$@" <<'EOF'
import sys, h5py
path, name, at = sys.argv[1], sys.argv[2], int(sys.argv[3])
with h5py.File(path, "r") as f:
    ds = f[name]
    off = ds.id.get_offset()
    if off is None:
        off = ds.id.get_chunk_info(0).byte_offset
with open(path, "r+b") as f:
    f.seek(off + at)
    b = bytearray(f.read(8))
    f.seek(off + at)
    f.write(bytes(x ^ 0x5A for x in b))
EOF
}

resume() {  # resume DIR: sets RC
  RC=0
  (cd "$1" && "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${BASE[@]}" --output r.h5 --resume >resume.log 2>&1) || RC=$?
}

for target in "/replicated/driver/global 16" "/clients/driver/client_figures/values 72"; do
  read -r dataset at <<<"$target"
  d=$WORK/ckpt_$(basename "$(dirname "$dataset")")
  stopped "$d"
  "$PY" -c "import h5py,sys; f=h5py.File(sys.argv[1],'r'); sys.exit(0 if sys.argv[2] in f else 1)" "$d/r.h5.ckpt" "$dataset" ||
    die "the checkpoint has no $dataset (layout changed? pick another array)"
  flip "$d/r.h5.ckpt" "$dataset" "$at"
  before=$(md5sum <"$d/r.h5.ckpt")
  resume "$d"
  [ "$RC" = 1 ] || fail "$dataset damaged: --resume exited $RC, expected 1: $(grep -m1 error "$d/resume.log")"
  grep -q "fedsilo: error: checkpoint r.h5.ckpt: array '$dataset' does not match its checksum" "$d/resume.log" ||
    fail "$dataset damaged: the error does not name the file and the array: $(grep -m1 error "$d/resume.log")"
  [ "$(grep -c 'fedsilo: error' "$d/resume.log")" = 1 ] || fail "$dataset damaged: not one error line"
  [ "$(md5sum <"$d/r.h5.ckpt")" = "$before" ] || fail "$dataset damaged: the checkpoint was changed"
  [ ! -e "$d/r.h5" ] || fail "$dataset damaged: a results file was published"
done

d=$WORK/partial
stopped "$d"
flip "$d/r.h5.partial" rounds/client_accuracy 0
before=$(md5sum <"$d/r.h5.ckpt")
damaged=$(md5sum <"$d/r.h5.partial")
resume "$d"
[ "$RC" = 1 ] || fail "damaged .partial: --resume exited $RC, expected 1: $(grep -m1 error "$d/resume.log")"
grep -q "fedsilo: error: partial results r.h5.partial does not match the checksum recorded in the checkpoint" \
  "$d/resume.log" || fail "damaged .partial: the error does not name the file: $(grep -m1 error "$d/resume.log")"
[ "$(grep -c 'fedsilo: error' "$d/resume.log")" = 1 ] || fail "damaged .partial: not one error line"
[ "$(md5sum <"$d/r.h5.ckpt")" = "$before" ] || fail "damaged .partial: the checkpoint was changed"
[ "$(md5sum <"$d/r.h5.partial")" = "$damaged" ] || fail "damaged .partial: the damaged file was changed"
[ ! -e "$d/r.h5" ] || fail "damaged .partial: a results file was published"
# As the error says: without the damaged file the results are rebuilt from the checkpoint.
rm "$d/r.h5.partial"
resume "$d"
[ "$RC" = 0 ] || fail "removed .partial: --resume exited $RC: $(grep -m1 error "$d/resume.log")"
grep -q "note: r.h5.partial is missing: rebuilding it from the checkpoint" "$d/resume.log" ||
  fail "removed .partial: no note naming the file: $(grep -m2 -E 'note|resuming' "$d/resume.log")"
grep -q "results: partial file rebuilt from the checkpoint" "$d/resume.log" || fail "removed .partial: not rebuilt"
h5_same "$WORK/ref.h5" "$d/r.h5" || fail "removed .partial: the result differs from the uninterrupted run"

# The same stop, undamaged: the partial file is re-opened (the check accepts an intact file).
d=$WORK/intact
stopped "$d"
resume "$d"
[ "$RC" = 0 ] && grep -q "results: partial file re-opened" "$d/resume.log" || fail "intact .partial: not re-opened (exit $RC)"
h5_same "$WORK/ref.h5" "$d/r.h5" || fail "intact .partial: the result differs from the uninterrupted run"

# A re-opened partial file that the resumed run then changed, before a hard kill, is not damage: the
# resumed run replaced the checkpoint first, so the next resume rebuilds the results from it.
d=$WORK/reopened_killed
stopped "$d"
cd "$d"  # (not a subshell: the signal goes to the children of mpirun itself)
FEDSILO_FAULT=slow:rank=0,ms=400 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${BASE[@]}" --output r.h5 --resume >resume1.log 2>&1 &
pid=$!
wait_for_line '^ +2 ' resume1.log 120 "$pid" || true
signal_ranks KILL "$pid" || true
wait "$pid" || true
cd "$WORK"
grep -q "results: partial file re-opened" "$d/resume1.log" || fail "re-opened then killed: not re-opened first"
[ ! -e "$d/r.h5" ] || fail "re-opened then killed: the run finished before the kill"
resume "$d"
[ "$RC" = 0 ] || fail "re-opened then killed: --resume exited $RC: $(grep -m1 error "$d/resume.log")"
grep -q "results: partial file rebuilt from the checkpoint" "$d/resume.log" || fail "re-opened then killed: not rebuilt"
h5_same "$WORK/ref.h5" "$d/r.h5" || fail "re-opened then killed: the result differs from the uninterrupted run"
finish
