#include "io/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>
#include <utility>

#include "core/error.hpp"

namespace fedsilo {

namespace {

// The holder writes its line right after taking the lock; a reader that comes in between sees an
// empty file, so it looks again for up to a second.
constexpr int kHolderTextTries = 20;
constexpr auto kHolderTextPause = std::chrono::milliseconds(50);
// A holder that unlinks the file between our open and our lock makes us retry; more than this many
// times in a row means something else keeps replacing the file.
constexpr int kAcquireTries = 50;

std::string hostName() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "unknown";
  return host;
}

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool lockUnsupported(int err) { return err == ENOLCK || err == ENOSYS || err == EOPNOTSUPP || err == EINVAL; }

// Whether `fd` is still the file named `path` (the holder we raced with may have removed it).
bool stillNamed(int fd, const std::string& path) {
  struct stat byFd {}, byName {};
  if (::fstat(fd, &byFd) != 0 || ::stat(path.c_str(), &byName) != 0) return false;
  return byFd.st_dev == byName.st_dev && byFd.st_ino == byName.st_ino;
}

void writeHolder(int fd) {
  const std::string line = "pid " + std::to_string(::getpid()) + " on host " + hostName() + ", since " + utcNow() + "\n";
  // Best effort: the lock itself is what excludes the other run; the text only names the holder.
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, line.data(), line.size(), 0);
}

[[noreturn]] void throwHeld(int fd, const std::string& lockPath, const std::string& output) {
  std::string holder;
  for (int i = 0; i < kHolderTextTries && holder.empty(); ++i) {
    holder = lockHolderText(fd);
    if (holder.empty()) std::this_thread::sleep_for(kHolderTextPause);
  }
  ::close(fd);
  throw ConfigError(fmt("output = ", output, ": another fedsilo run is writing it (",
                        holder.empty() ? std::string("its pid is not recorded yet") : holder, "; it holds ", lockPath,
                        "); wait for it to finish, or choose another --output"));
}

}  // namespace

std::string lockHolderText(int fd) {
  char buf[512] = {};
  const ssize_t got = ::pread(fd, buf, sizeof buf - 1, 0);
  if (got <= 0) return "";
  std::string s(buf, static_cast<std::size_t>(got));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

OutputLock OutputLock::acquire(const std::string& lockPath, const std::string& output) {
  for (int attempt = 0; attempt < kAcquireTries; ++attempt) {
    // Whether this call created the file: on a file system without locks only then may it remove it
    // again (otherwise it may be the file of a run that is writing the same output right now).
    int fd = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    const bool created = fd >= 0;
    if (fd < 0 && errno == EEXIST) fd = ::open(lockPath.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
      throw RuntimeError(fmt("output = ", output, ": cannot create the lock file ", lockPath, ": ", std::strerror(errno)));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if (err == EWOULDBLOCK) throwHeld(fd, lockPath, output);
      OutputLock unlocked;
      unlocked.path_ = lockPath;
      unlocked.warning_ = lockUnsupported(err)
                              ? fmt("cannot lock ", lockPath, " (", std::strerror(err),
                                    "): this file system does not support locks, so a second run writing ", output,
                                    " at the same time would not be detected")
                              : fmt("cannot lock ", lockPath, ": ", std::strerror(err));
      ::close(fd);
      if (created) ::unlink(lockPath.c_str());
      return unlocked;
    }
    if (!stillNamed(fd, lockPath)) {  // the previous holder removed it after our open: take the new one
      ::close(fd);
      continue;
    }
    writeHolder(fd);
    OutputLock lock;
    lock.fd_ = fd;
    lock.path_ = lockPath;
    return lock;
  }
  throw RuntimeError(fmt("output = ", output, ": ", lockPath, " kept being replaced while fedsilo tried to lock it"));
}

OutputLock::OutputLock(OutputLock&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)), warning_(std::move(o.warning_)) {}

OutputLock& OutputLock::operator=(OutputLock&& o) noexcept {
  if (this != &o) {
    release();
    fd_ = std::exchange(o.fd_, -1);
    path_ = std::move(o.path_);
    warning_ = std::move(o.warning_);
  }
  return *this;
}

OutputLock::~OutputLock() { release(); }

void OutputLock::release() {
  if (fd_ < 0) return;
  // Unlink while still holding the lock: a run that opened the old file before this point finds it
  // no longer named so (stillNamed) and retries on a fresh file.
  ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

void OutputLock::holdUntilExit() { fd_ = -1; }

}  // namespace fedsilo
