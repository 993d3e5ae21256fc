// fedsilo's entry point: the BLAS threads, MPI, the command line and the run inside coordinated error
// handling, and how the ranks leave after a failure.
#include "app/run_main.hpp"

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "app/calibrate_command.hpp"
#include "app/config_parser.hpp"
#include "app/fault_injection.hpp"
#include "app/launch_check.hpp"
#include "app/run_control.hpp"
#include "comm/communicator.hpp"
#include "privacy/epsilon_command.hpp"

#ifdef FEDSILO_OPENBLAS_THREADS  // the BLAS is OpenBLAS (cmake/blas.cmake checks that it has the call)
extern "C" void openblas_set_num_threads(int);
#endif

namespace fedsilo {

namespace {

// How the run ended on this rank.
struct Outcome {
  int code = 0;
  bool threw = false;   // an exception ended the run
  bool agreed = false;  // every rank knows about that failure
  std::string error;    // what this rank reports ("" when another rank reports it)
};

void failedWith(Outcome& out, int code, bool agreed, const std::string& error = "") {
  out.code = code == 0 ? 1 : code;
  out.threw = true;
  out.agreed = agreed;
  out.error = error;
}

// Parses the command line and runs the experiment on this rank. A non-zero code without an exception is
// a clean stop, e.g. 75 after a checkpoint on SIGTERM.
Outcome runOnRank(int argc, char** argv, const LaunchEnvironment& launch, const Communicator& comm) {
  Outcome out;
  try {
    ParseOutcome parsed;
    coordinated(comm, [&] { parsed = parseCommandLine(argc, argv); });
    if (parsed.action != ParseOutcome::Action::Run) {
      if (comm.isRoot()) std::fputs(parsed.text.c_str(), stdout);
      if (parsed.action != ParseOutcome::Action::DryRun) return out;
      std::fflush(stdout);
    }
    // A dry run vets a configuration wherever it is started (a login node inside an allocation that
    // sets SLURM_NTASKS): the launch check is for runs only.
    if (parsed.action == ParseOutcome::Action::DryRun) {
      out.code = dryRunExperiment(parsed.config, comm);
      return out;
    }
    coordinated(comm, [&] { checkLaunch(launch, comm.size()); });
    out.code = runExperiment(parsed.config, comm);
  } catch (const PeerFailure& e) {
    failedWith(out, static_cast<int>(e.code()), agreedFailure(e));
  } catch (const Error& e) {
    failedWith(out, static_cast<int>(e.code()), agreedFailure(e), e.what());
  } catch (const std::exception& e) {
    failedWith(out, 1, agreedFailure(e), e.what());
  }
  return out;
}

// How long a rank other than rank 0 waits before it reports a failure that was not agreed on and
// aborts the run. Several ranks can fail in the same collective call (a full disk inside a collective
// HDF5 flush): rank 0, when it is one of them, reports first and its abort ends the others before they
// print, so the failure is said once. A rank that fails alone reports after this wait.
constexpr auto kUnagreedReportDelay = std::chrono::milliseconds(3000);

// kUnagreedReportDelay, or a test's FEDSILO_FAULT report_delay_ms (app/fault_injection.hpp). A malformed
// FEDSILO_FAULT may be the very failure being reported: then the default.
std::chrono::milliseconds unagreedReportDelay() {
  try {
    return faultPlanFromEnvironment().unagreedReportDelay(kUnagreedReportDelay);
  } catch (const std::exception&) {
    return kUnagreedReportDelay;
  }
}

// Prints this rank's error line ("fedsilo: error: ..."), if it has one.
void reportFailure(const Outcome& out, const Communicator& comm) {
  if (out.error.empty()) return;
  if (!out.agreed && !comm.isRoot()) std::this_thread::sleep_for(unagreedReportDelay());
  std::fprintf(stderr, "fedsilo: error: %s\n", out.error.c_str());
}

void leaveAfterFailure(Outcome& out, const Communicator& comm) {
  reportFailure(out, comm);
  std::fflush(stderr);
  if (out.agreed) {
    // Every rank agreed on the failure and the reporting rank has printed it. Leave together: mpirun
    // kills the remaining ranks as soon as one exits non-zero, which could cut the message short. And
    // leave with one code: the reporting rank may have classified its error further (a storage
    // failure) after the others learnt only that it failed.
    try {
      out.code = comm.allreduceMax(out.code);
    } catch (const std::exception&) {  // nothing left to report; exit with the agreed code
    }
    return;
  }
  // The failure happened outside a coordinated region: the other ranks may be blocked in a collective,
  // so take every rank down now (run control has removed the partial results file and a half-written
  // checkpoint, when they were this run's: it held the output's lock).
  MpiEnvironment::abort(out.code);
}

}  // namespace

int runMain(int argc, char** argv) {
#ifdef FEDSILO_OPENBLAS_THREADS
  // One BLAS thread per rank: ranks are the parallelism (measured on the build machine: a second BLAS
  // thread per rank made PyTorch 3x slower on batch-32 GEMMs). BLIS and the reference BLAS are
  // single-threaded unless told otherwise.
  openblas_set_num_threads(1);
#endif
  // `fedsilo epsilon ...` answers from the accountant alone: no MPI, no experiment.
  if (argc > 1 && std::string(argv[1]) == "epsilon") return runEpsilonCommand(argc - 1, argv + 1);
  // `fedsilo calibrate ...` times training on this rank alone (MPI initialised for the data loaders).
  if (argc > 1 && std::string(argv[1]) == "calibrate") {
    MpiEnvironment env(argc, argv);
    return runCalibrateCommand(argc - 1, argv + 1);
  }
  const LaunchEnvironment launch = LaunchEnvironment::fromEnvironment();  // before MPI adds variables of its own
  MpiEnvironment env(argc, argv);
  Outcome out;
  {
    Communicator comm = Communicator::world();
    out = runOnRank(argc, argv, launch, comm);
    if (out.threw) leaveAfterFailure(out, comm);
  }
  return out.code;
}

}  // namespace fedsilo
