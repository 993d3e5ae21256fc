#include "app/signals.hpp"

#include <cstdio>

namespace fedsilo {

namespace {

// Only async-signal-safe work in the handler: remember the first signal. A second signal changes
// nothing (the run is already stopping at the end of the round); SIGKILL cannot be caught anyway.
volatile std::sig_atomic_t gStopSignal = 0;

extern "C" void onStopSignal(int sig) {
  if (gStopSignal == 0) gStopSignal = sig;
}

void install(int sig) {
  struct sigaction sa {};
  sa.sa_handler = onStopSignal;
  sigemptyset(&sa.sa_mask);
  // SA_RESTART: a signal must not turn a blocking read/write inside MPI or HDF5 into an EINTR error.
  sa.sa_flags = SA_RESTART;
  sigaction(sig, &sa, nullptr);
}

}  // namespace

StopSignals::StopSignals() {
  gStopSignal = 0;
  install(SIGTERM);
  install(SIGUSR1);
}

int StopSignals::pending() { return gStopSignal; }

const char* StopSignals::name(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    default: {
      static thread_local char buf[32];
      std::snprintf(buf, sizeof buf, "signal %d", sig);
      return buf;
    }
  }
}

}  // namespace fedsilo
