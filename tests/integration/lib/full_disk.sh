# A small disk that fills up, for the tests of storage failures (test_full_disk, test_stuck_writes).
# Sourced after lib/hpc_common.sh. A small tmpfs where the test may mount one (root with
# CAP_SYS_ADMIN), so that the failures come from the kernel inside HDF5 and MPI-IO; otherwise (and with
# FEDSILO_FULL_DISK_MODE=shim, which ctest's test_full_disk_shim sets) a folder of the work directory
# whose files share the same capacity through an LD_PRELOAD shim in every rank
# (tests/support/full_disk_shim.c, FEDSILO_FULL_DISK_SHIM, set by ctest): each write() / pwrite() /
# writev() / pwritev() that would grow them beyond it fails with ENOSPC, in HDF5, MPI-IO and fedsilo
# alike. The test exits 77 (SKIPPED to ctest) only when neither can be had.
#   MNT              the disk's folder (its real path)
#   disk_make KB     an empty disk of KB kilobytes at $MNT
#   disk_make_bytes B  the shim's disk only: a capacity of B bytes
#   FILL             the command prefix that runs a rank on the disk ("${FILL[@]}" fedsilo ...)
#   disk_free_space  the disk grows to 4 MB, its files kept
#   disk_drop        the disk goes, its files with it
make_workdir
mkdir "$WORK/disk"
MNT=$(cd "$WORK/disk" && pwd -P)
MODE=${FEDSILO_FULL_DISK_MODE:-tmpfs}
if [ "$MODE" = tmpfs ]; then
  if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=16k tmpfs "$MNT" 2>/dev/null; then
    log "cannot mount a tmpfs here (not root, or a container without CAP_SYS_ADMIN): the shim's disk instead"
    MODE=shim
  else
    umount "$MNT"
  fi
fi
SHIM=${FEDSILO_FULL_DISK_SHIM:-}
if [ "$MODE" = shim ] && [ ! -f "$SHIM" ]; then
  echo "SKIPPED: no tmpfs can be mounted and FEDSILO_FULL_DISK_SHIM names no shim (run it through ctest)"
  exit 77
fi
log "the full disk: $MODE"
cleanup() {
  [ "$MODE" = tmpfs ] && { umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null || true; }
  rm -rf "$WORK"
}
trap cleanup EXIT
# A disk of $1 KB at $MNT, empty; FILL is the command prefix that runs a rank on it.
FILL=()
disk_make() {
  if [ "$MODE" = tmpfs ]; then
    mount -t tmpfs -o size="$1"k tmpfs "$MNT" || die "cannot mount a tmpfs"
  else
    disk_make_bytes $(($1 * 1024))
  fi
}
# The shim's disk only: a capacity in bytes. (The shim is not built with the sanitizers: their
# runtime need not come first under it.)
disk_make_bytes() {
  FILL=(env LD_PRELOAD="$SHIM" FEDSILO_FULL_DISK_DIR="$MNT" FEDSILO_FULL_DISK_BYTES="$1"
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0")
}
disk_free_space() {
  if [ "$MODE" = tmpfs ]; then mount -o remount,size=4m "$MNT"; else disk_make 4096; fi
}
disk_drop() {
  if [ "$MODE" = tmpfs ]; then umount "$MNT"; else find "$MNT" -mindepth 1 -delete; fi
}
