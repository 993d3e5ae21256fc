#!/usr/bin/env bash
# label: integration
# timeout: 300
# Storage errors carry the system's reason, in one error line, with nothing left behind
# (docs/hpc.md, "Failure modes"). Needs root (it mounts file systems; they are unmounted at the end):
#  * a file system that fills up mid-run (a 1 MiB tmpfs with ~120 KB free: enough for the start-up
#    checks, not for the results file): exit 74 (a storage failure) naming "No space left on device" (Open MPI's MPI-IO
#    reports a failed write without a reason; fedsilo asks the file system), at 1 and 2 ranks, and
#    no .partial or .lock left;
#  * a full file system from the start: refused at start-up (before any data is read) with ENOSPC, exit 74;
#  * a read-only bind mount: refused at start-up with "Read-only file system", exit 74;
#  * a checkpoint path that is a folder: one line (exit 2), no MPI-IO messages, nothing created.
TEST_NAME=test_storage_errors
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
[ "$(id -u)" = 0 ] || die "needs root to mount a small tmpfs and a read-only bind mount; run the test as root"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fedsilo-$TEST_NAME.XXXXXX")
MOUNTS=()
cleanup() {
  for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"

# case NAME NP WANT_RC PATTERN OUTPUT [ARGS...]: one error line matching PATTERN, exit WANT_RC, no
# .partial, .ckpt.tmp or .lock of OUTPUT left.
check_case() {
  local name=$1 np=$2 want=$3 pattern=$4 out=$5
  shift 5
  local rc=0 t0
  t0=$(now_ms)
  "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "${TINY[@]}" --rounds 3 --output "$out" "$@" >"$name.log" 2>&1 || rc=$?
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

mkdir full && mount -t tmpfs -o size=1M tmpfs full && MOUNTS+=("$WORK/full") || die "cannot mount a tmpfs"
dd if=/dev/zero of=full/filler bs=1k count=900 status=none 2>/dev/null || true
for np in 1 2; do
  check_case fills-up "$np" 74 "No space left on device \\(full/r\.h5[^ ]*\\)$" full/r.h5
done
dd if=/dev/zero of=full/more bs=1k count=1024 status=none 2>/dev/null || true  # now nothing is free
check_case full-at-start 2 74 "output = full/r.h5: cannot write 4096 bytes in full: No space left on device" full/r.h5
grep -q 'round +global_acc' full-at-start.log && fail "full-at-start: the run started before the check"

mkdir rw ro && mount --bind rw ro && MOUNTS+=("$WORK/ro") && mount -o remount,bind,ro ro || die "cannot make a read-only bind mount"
check_case read-only 2 74 "output = ro/r.h5: cannot create a file in ro: Read-only file system" ro/r.h5

mkdir ckdir && mkdir ckdir/r.h5.ckpt
check_case checkpoint-is-a-folder 2 2 "ckdir/r.h5.ckpt \(the checkpoint\) is a folder" ckdir/r.h5 --checkpoint.every 1
# Without mpirun (whose own lines about the exit are not fedsilo's): exactly one line in all.
lines=$("$FEDSILO_EXE" "${TINY[@]}" --rounds 3 --checkpoint.every 1 --output ckdir/r.h5 2>&1 | grep -c . || true)
[ "$lines" = 1 ] || fail "checkpoint path a folder: $lines lines of output, expected 1"
[ "$(ls -A ckdir)" = r.h5.ckpt ] || fail "checkpoint path a folder: files created: $(ls -A ckdir)"
finish
