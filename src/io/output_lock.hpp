// One writer per output: an exclusive flock(2) on <output>.lock, taken by rank 0 before the run
// creates, removes or renames any file of that output, and held for the run's life (docs/hpc.md,
// "One writer per output").
//
// The kernel drops the lock when the holder's process ends in any way (SIGKILL included), so a lock
// file left behind by a dead run never blocks the next one: only a living holder does. The file holds
// the holder's pid, host and start time, for the message the second run prints. It is removed by its
// holder on release; a run that takes the lock checks that the file it locked is still the one under
// that name (a holder may unlink it in between) and tries again if not.
//
// Over NFS, Linux implements flock as a whole-file POSIX lock through the lock manager (lockd, NLM, or
// NFSv4's own locks), so it works across hosts when locking is enabled on the mount; a host that dies
// holding it keeps it until the server notices (NLM: the client's reboot; NFSv4: the lease, about
// 90 s). Lustre supports it across clients only when mounted with `-o flock`; with `-o localflock`
// the lock covers one client node only, and without either option flock fails with ENOSYS: fedsilo then
// runs without the lock and warns.
#pragma once
#include <string>

namespace fedsilo {

class OutputLock {
 public:
  // No lock (a moved-from lock, or one not taken).
  OutputLock() = default;
  // Takes the lock on `lockPath` without waiting (rank-local; the caller runs it on one rank).
  // `output` is the results file's name, for the messages. Throws ConfigError (exit 2) naming the
  // holder's pid and host when another process holds the lock, RuntimeError (exit 1) with the
  // system's reason when the lock file cannot be created. On a file system without locks it returns
  // an unlocked OutputLock whose warning() says so.
  static OutputLock acquire(const std::string& lockPath, const std::string& output);
  OutputLock(OutputLock&& o) noexcept;
  OutputLock& operator=(OutputLock&& o) noexcept;
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  // Releases (see release()).
  ~OutputLock();

  // Removes the lock file, then drops the lock. Idempotent.
  void release();
  // Keeps the lock until the process exits (the kernel drops it then): for a run that is about to
  // abort while other ranks may still write the output's files.
  void holdUntilExit();
  bool held() const { return fd_ >= 0; }
  const std::string& warning() const { return warning_; }

 private:
  int fd_ = -1;
  std::string path_, warning_;
};

// What <output>.lock says about the process that holds it ("pid 1234 on host node7, since
// 2026-01-01T10:00:00Z"), or "" when the file is empty or unreadable.
std::string lockHolderText(int fd);

}  // namespace fedsilo
