// io/output_lock on a file system without locks (NFS without lockd, Lustre without -o flock): flock(2)
// fails there with ENOLCK or ENOSYS. The run goes on unlocked with a warning, and it never removes a
// lock file it did not create, which may belong to a run writing the same output right now.
//
// flock is replaced in this test program (a definition in the executable takes precedence over the C
// library's) so that it fails with a chosen errno while g_flockErrno is set, and otherwise calls the
// kernel, so the other tests of this binary see the real flock.
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "io/output_lock.hpp"
#include "support/test_support.hpp"

namespace {
std::atomic<int> g_flockErrno{0};

// Sets the errno flock fails with for one scope.
struct FlockFails {
  explicit FlockFails(int err) { g_flockErrno = err; }
  ~FlockFails() { g_flockErrno = 0; }
  FlockFails(const FlockFails&) = delete;
  FlockFails& operator=(const FlockFails&) = delete;
};

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

extern "C" int flock(int fd, int operation) noexcept {
  if (const int err = g_flockErrno.load()) {
    errno = err;
    return -1;
  }
  return static_cast<int>(::syscall(SYS_flock, fd, operation));
}

using namespace fedsilo;

TEST(OutputLockWithoutLocks, RunsUnlockedWithAWarningAndRemovesOnlyTheFileItCreated) {
  const std::string dir = test::tempDir("nolock");
  const std::string path = dir + "/r.h5.lock";
  FlockFails fails(ENOLCK);
  OutputLock lock = OutputLock::acquire(path, dir + "/r.h5");
  EXPECT_FALSE(lock.held());
  EXPECT_NE(lock.warning().find("does not support locks"), std::string::npos) << lock.warning();
  EXPECT_NE(lock.warning().find(path), std::string::npos) << lock.warning();
  EXPECT_FALSE(std::filesystem::exists(path));  // it created the file, so it may remove it
}

TEST(OutputLockWithoutLocks, NeverRemovesALockFileAnotherRunCreated) {
  const std::string dir = test::tempDir("nolockother");
  const std::string path = dir + "/r.h5.lock";
  const std::string other = "pid 4242 on host elsewhere, since 2026-01-01T00:00:00Z\n";
  std::ofstream(path) << other;
  for (const int err : {ENOLCK, ENOSYS, EOPNOTSUPP}) {
    FlockFails fails(err);
    OutputLock lock = OutputLock::acquire(path, dir + "/r.h5");
    EXPECT_FALSE(lock.held());
    EXPECT_NE(lock.warning().find("does not support locks"), std::string::npos) << err << ": " << lock.warning();
    lock.release();
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(readAll(path), other);  // neither removed nor overwritten
}

TEST(OutputLockWithoutLocks, AnotherLockFailureIsNamedWithItsReason) {
  const std::string dir = test::tempDir("nolockeio");
  const std::string path = dir + "/r.h5.lock";
  FlockFails fails(EIO);
  const OutputLock lock = OutputLock::acquire(path, dir + "/r.h5");
  EXPECT_FALSE(lock.held());
  EXPECT_EQ(lock.warning(), "cannot lock " + path + ": " + std::strerror(EIO));
}
