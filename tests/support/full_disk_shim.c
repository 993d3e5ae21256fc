/* A full disk for tests that cannot mount one (tests/integration/test_full_disk.sh without root or
 * without CAP_SYS_ADMIN). Loaded with LD_PRELOAD into each rank, it makes the files of one folder
 * share a capacity, as a small file system does: a write that would grow the files of
 * FEDSILO_FULL_DISK_DIR beyond FEDSILO_FULL_DISK_BYTES in total fails with ENOSPC. The files' sizes
 * are read from the folder itself at each write, so every rank of a run (each its own process)
 * sees the same disk. It wraps the calls through which fedsilo, HDF5 and Open MPI's MPI-IO write
 * (write, pwrite, writev, pwritev and their 64-bit and v2 forms); a write that only overwrites what
 * a file holds already takes no space and passes, and so do writes to files elsewhere. Neither
 * variable set: the shim does nothing. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static const char* diskDir(void) {
  const char* dir = getenv("FEDSILO_FULL_DISK_DIR");
  return dir != NULL && dir[0] == '/' ? dir : NULL;
}

/* 1 when `fd` is a regular file directly inside the disk's folder. */
static int onDisk(int fd, const char* dir) {
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  const size_t len = strlen(dir);
  return strncmp(path, dir, len) == 0 && path[len] == '/' && strchr(path + len + 1, '/') == NULL;
}

/* The bytes the files of the folder hold now (their sizes). */
static long long usedBytes(const char* dir) {
  DIR* d = opendir(dir);
  if (d == NULL) return 0;
  long long used = 0;
  const struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) used += st.st_size;
  }
  closedir(d);
  return used;
}

/* 1 when writing `bytes` at `offset` of `fd` (-1: the file position, or the end under O_APPEND) would
 * fill the disk beyond its capacity. */
static int wouldOverfill(int fd, long long offset, size_t bytes) {
  const char* dir = diskDir();
  const char* capacity = getenv("FEDSILO_FULL_DISK_BYTES");
  if (dir == NULL || capacity == NULL || bytes == 0 || !onDisk(fd, dir)) return 0;
  struct stat st;
  if (fstat(fd, &st) != 0) return 0;
  if (offset < 0) {
    const int flags = fcntl(fd, F_GETFL);
    offset = flags >= 0 && (flags & O_APPEND) ? (long long)st.st_size : (long long)lseek(fd, 0, SEEK_CUR);
    if (offset < 0) return 0;
  }
  const long long end = offset + (long long)bytes;
  if (end <= (long long)st.st_size) return 0;
  return usedBytes(dir) + (end - (long long)st.st_size) > atoll(capacity);
}

static size_t vectorBytes(const struct iovec* iov, int count) {
  size_t bytes = 0;
  for (int i = 0; i < count; ++i) bytes += iov[i].iov_len;
  return bytes;
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))
#define FAIL_IF_FULL(fd, offset, bytes) \
  do {                                  \
    if (wouldOverfill(fd, offset, bytes)) { \
      errno = ENOSPC;                   \
      return -1;                        \
    }                                   \
  } while (0)

ssize_t write(int fd, const void* buf, size_t count) {
  FAIL_IF_FULL(fd, -1, count);
  return REAL(write)(fd, buf, count);
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  FAIL_IF_FULL(fd, offset, count);
  return REAL(pwrite)(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off64_t offset) {
  FAIL_IF_FULL(fd, offset, count);
  return REAL(pwrite64)(fd, buf, count, offset);
}

ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  FAIL_IF_FULL(fd, -1, vectorBytes(iov, iovcnt));
  return REAL(writev)(fd, iov, iovcnt);
}

ssize_t pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  FAIL_IF_FULL(fd, offset, vectorBytes(iov, iovcnt));
  return REAL(pwritev)(fd, iov, iovcnt, offset);
}

ssize_t pwritev64(int fd, const struct iovec* iov, int iovcnt, off64_t offset) {
  FAIL_IF_FULL(fd, offset, vectorBytes(iov, iovcnt));
  return REAL(pwritev64)(fd, iov, iovcnt, offset);
}

ssize_t pwritev2(int fd, const struct iovec* iov, int iovcnt, off_t offset, int flags) {
  FAIL_IF_FULL(fd, offset, vectorBytes(iov, iovcnt));
  return REAL(pwritev2)(fd, iov, iovcnt, offset, flags);
}

ssize_t pwritev64v2(int fd, const struct iovec* iov, int iovcnt, off64_t offset, int flags) {
  FAIL_IF_FULL(fd, offset, vectorBytes(iov, iovcnt));
  return REAL(pwritev64v2)(fd, iov, iovcnt, offset, flags);
}
