#!/usr/bin/env bash
# label: integration
# timeout: 300
# skip_return_code: 77
# Storage errors carry the system's reason, in one error line, with nothing left behind
# (docs/hpc.md, "Failure modes"). The small disk is a tmpfs where the test may mount one (root), else
# the LD_PRELOAD shim's folder (lib/full_disk.sh says how; skipped, exit 77, only without either):
#  * a disk that fills up mid-run (1 MiB with ~120 KB free: enough for the start-up checks, not for
#    the results file): exit 74 (a storage failure) naming "No space left on device" (Open MPI's MPI-IO
#    reports a failed write without a reason; fedsilo asks the file system), at 1 and 2 ranks, and
#    no .partial or .lock left;
#  * a full disk from the start: refused at start-up (before any data is read) with ENOSPC, exit 74;
#  * a folder it may not write: as root a read-only bind mount, refused at start-up with "Read-only
#    file system"; otherwise a folder without write permission, "Permission denied"; exit 74;
#  * a checkpoint path that is a folder: one line (exit 2), no MPI-IO messages, nothing created.
TEST_NAME=test_storage_errors
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/full_disk.sh"
RO_MOUNT=""
storage_cleanup() {
  if [ -n "$RO_MOUNT" ]; then umount "$RO_MOUNT" 2>/dev/null || umount -l "$RO_MOUNT" 2>/dev/null || true; fi
  chmod -R u+w "$WORK" 2>/dev/null || true
  cleanup  # lib/full_disk.sh: the disk and the work directory
}
trap storage_cleanup EXIT
cd "$WORK"

# case NAME NP WANT_RC PATTERN OUTPUT [ARGS...]: one error line matching PATTERN, exit WANT_RC, no
# .partial, .ckpt.tmp or .lock of OUTPUT left.
check_case() {
  local name=$1 np=$2 want=$3 pattern=$4 out=$5
  shift 5
  local rc=0 t0
  t0=$(now_ms)
  "$MPIEXEC" -n "$np" "${FILL[@]}" "$FEDSILO_EXE" "${TINY[@]}" --rounds 3 --output "$out" "$@" >"$name.log" 2>&1 || rc=$?
  local errs
  errs=$(grep 'fedsilo: error' "$name.log" || true)
  log "$name (-n $np): exit $rc in $(($(now_ms) - t0)) ms: $errs"
  [ "$rc" = "$want" ] || fail "$name (-n $np): exit $rc, expected $want"
  [ "$(grep -c . <<<"$errs")" = 1 ] || fail "$name (-n $np): $(grep -c . <<<"$errs") error lines, expected 1"
  grep -qE -- "$pattern" <<<"$errs" || fail "$name (-n $np): the error does not match /$pattern/"
  local left
  left=$(ls -A "$(dirname "$out")" | grep -E "^$(basename "$out")\.(partial|ckpt\.tmp|lock)$" || true)
  [ -z "$left" ] || fail "$name (-n $np): left behind: $left"
}

disk_make 1024
dd if=/dev/zero of=disk/filler bs=1k count=900 status=none 2>/dev/null || true
for np in 1 2; do
  check_case fills-up "$np" 74 "No space left on device \\(disk/r\.h5[^ ]*\\)$" disk/r.h5
done
dd if=/dev/zero of=disk/more bs=1k count=1024 status=none 2>/dev/null || true  # now nothing is free
check_case full-at-start 2 74 "output = disk/r.h5: cannot write 4096 bytes in disk: No space left on device" disk/r.h5
grep -q 'round +global_acc' full-at-start.log && fail "full-at-start: the run started before the check"
FILL=()

mkdir rw ro
if [ "$(id -u)" = 0 ]; then
  mount --bind rw ro && RO_MOUNT="$WORK/ro" && mount -o remount,bind,ro ro || die "cannot make a read-only bind mount"
  check_case read-only 2 74 "output = ro/r.h5: cannot create a file in ro: Read-only file system" ro/r.h5
else
  chmod a-w ro
  check_case read-only 2 74 "output = ro/r.h5: cannot create a file in ro: Permission denied" ro/r.h5
fi

mkdir ckdir && mkdir ckdir/r.h5.ckpt
check_case checkpoint-is-a-folder 2 2 "ckdir/r.h5.ckpt \(the checkpoint\) is a folder" ckdir/r.h5 --checkpoint.every 1
# Without mpirun (whose own lines about the exit are not fedsilo's): exactly one line in all.
lines=$("$FEDSILO_EXE" "${TINY[@]}" --rounds 3 --checkpoint.every 1 --output ckdir/r.h5 2>&1 | grep -c . || true)
[ "$lines" = 1 ] || fail "checkpoint path a folder: $lines lines of output, expected 1"
[ "$(ls -A ckdir)" = r.h5.ckpt ] || fail "checkpoint path a folder: files created: $(ls -A ckdir)"
finish
