// Stop requests from the batch system: SIGTERM (scancel, pre-emption, mpirun forwarding its own
// SIGTERM) and SIGUSR1 (`sbatch --signal=USR1@120` before the walltime). The handler only records the
// signal; the round driver polls it at the end of every round and all ranks agree (allreduce) before
// they checkpoint and stop, so no rank ever leaves a collective early.
#pragma once
#include <csignal>

namespace fedsilo {

// Installs the handlers and clears the recorded signal. The handlers stay installed for the rest of
// the process, also after this object is gone: a stop signal that arrives once the run has returned
// (while MPI shuts down, the results already published) is recorded and ignored. Restoring the
// default action there let such a signal kill a rank of a finished run (exit 138 from mpirun; seen
// by tests/integration/test_fault_soak.sh). One instance at a time; not thread-safe to construct
// concurrently.
class StopSignals {
 public:
  StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The first stop signal received since construction (0: none).
  static int pending();
  // Name for messages: "SIGTERM", "SIGUSR1", or "signal N".
  static const char* name(int sig);
};

}  // namespace fedsilo
