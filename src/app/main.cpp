// fedsilo: wires config, experiment and results file inside coordinated error handling.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "app/config_parser.hpp"
#include "app/run_control.hpp"
#include "comm/communicator.hpp"
#include "privacy/epsilon_command.hpp"

extern "C" void openblas_set_num_threads(int);

using namespace fedsilo;

int main(int argc, char** argv) {
  // One BLAS thread per rank: ranks are the parallelism (measured on the build machine: a second BLAS
  // thread per rank made PyTorch 3x slower on batch-32 GEMMs).
  openblas_set_num_threads(1);
  // `fedsilo epsilon ...` answers from the accountant alone: no MPI, no experiment.
  if (argc > 1 && std::string(argv[1]) == "epsilon") return runEpsilonCommand(argc - 1, argv + 1);
  MpiEnvironment env(argc, argv);
  int code = 0;
  bool threw = false, agreed = false;
  {
    Communicator comm = Communicator::world();
    try {
      ParseOutcome parsed;
      coordinated(comm, [&] { parsed = parseCommandLine(argc, argv); });
      if (parsed.action != ParseOutcome::Action::Run) {
        if (comm.isRoot()) std::fputs(parsed.text.c_str(), stdout);
        if (parsed.action != ParseOutcome::Action::DryRun) return 0;
        std::fflush(stdout);
        code = dryRunExperiment(parsed.config, comm);
      } else {
        code = runExperiment(parsed.config, comm);
      }
    } catch (const PeerFailure& e) {
      code = static_cast<int>(e.code());
      threw = true;
      agreed = agreedFailure(e);
    } catch (const Error& e) {
      std::fprintf(stderr, "fedsilo: error: %s\n", e.what());
      code = static_cast<int>(e.code());
      threw = true;
      agreed = agreedFailure(e);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fedsilo: error: %s\n", e.what());
      code = 1;
      threw = true;
      agreed = agreedFailure(e);
    }
    // (A non-zero code without an exception is a clean stop, e.g. 75 after a checkpoint on SIGTERM.)
    if (threw && code == 0) code = 1;
    // Every rank agreed on the failure and the reporting rank has printed it. Leave together: mpirun
    // kills the remaining ranks as soon as one exits non-zero, which could cut the message short.
    if (threw && agreed) {
      std::fflush(stderr);
      try {
        comm.barrier();
      } catch (const std::exception&) {  // nothing left to report; exit with the agreed code
      }
    }
    if (threw && !agreed) {
      // The failure happened outside a coordinated region: the other ranks may be blocked in a
      // collective, so take every rank down now (run control has removed the partial results file and
      // a half-written checkpoint, if they were this run's).
      std::fflush(stderr);
      MpiEnvironment::abort(code);
    }
  }
  return code;
}
