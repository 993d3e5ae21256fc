// Stop requests from the batch system: SIGTERM (scancel, pre-emption, mpirun forwarding its own
// SIGTERM) and SIGUSR1 (`sbatch --signal=USR1@120` before the walltime). The handler only records the
// signal; the round driver polls it at the end of every round and all ranks agree (allreduce) before
// they checkpoint and stop, so no rank ever leaves a collective early.
#pragma once
#include <csignal>

namespace fedsilo {

// Installs the handlers for its lifetime (restoring the previous dispositions afterwards). One
// instance at a time; not thread-safe to construct concurrently.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The first stop signal received since construction (0: none).
  static int pending();
  // Name for messages: "SIGTERM", "SIGUSR1", or "signal N".
  static const char* name(int sig);

 private:
  struct sigaction oldTerm_ {}, oldUsr1_ {};
};

}  // namespace fedsilo
