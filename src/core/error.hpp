// Error types and their process exit codes (documented in README and docs/cli.md).
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace fedsilo {

// Storage = 74 is sysexits.h's EX_IOERR; 75 (EX_TEMPFAIL, a stop on a signal) is app/run_control.hpp's.
enum class ExitCode : int { Ok = 0, Other = 1, Config = 2, Data = 3, Storage = 74 };

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
  ExitCode code() const { return code_; }
  // Every MPI rank knows about this failure and unwinds too. Set by coordinated()
  // (comm/communicator.hpp) on the error it rethrows; callers ask through agreedFailure().
  bool agreed() const { return agreed_; }
  void markAgreed() { agreed_ = true; }

 private:
  ExitCode code_;
  bool agreed_ = false;
};

// Bad command line or configuration value (exit code 2).
class ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& what) : Error(ExitCode::Config, what) {}
};

// Bad or missing input data (exit code 3).
class DataError : public Error {
 public:
  explicit DataError(const std::string& what) : Error(ExitCode::Data, what) {}
};

// Numerical failure: NaN/Inf loss or update (exit code 1).
class NumericError : public Error {
 public:
  explicit NumericError(const std::string& what) : Error(ExitCode::Other, what) {}
};

// A write, close, sync or rename of an output file failed (no space, quota, I/O error, read-only
// file system) while the run was going (exit code 74). The message ends with the system's reason and
// the file: "...: No space left on device (out/r.h5.ckpt.tmp)".
class StorageError : public Error {
 public:
  explicit StorageError(const std::string& what) : Error(ExitCode::Storage, what) {}
};

// Anything else detected at run time: I/O, MPI, internal (exit code 1).
class RuntimeError : public Error {
 public:
  explicit RuntimeError(const std::string& what) : Error(ExitCode::Other, what) {}
};

// Builds a message from stream pieces: fmt("bad lr ", lr, ", expected > 0").
template <typename... Args>
std::string fmt(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

}  // namespace fedsilo

// Invariant checks that stay on in release builds: a broken invariant is a bug, reported as RuntimeError.
#define FEDSILO_ASSERT(cond, ...)                                                                \
  do {                                                                                           \
    if (!(cond))                                                                                 \
      throw ::fedsilo::RuntimeError(::fedsilo::fmt("internal error at ", __FILE__, ":", __LINE__, \
                                                   ": ", #cond, " ", ##__VA_ARGS__));            \
  } while (0)
