// fedsilo: wires config, experiment and results file inside coordinated error handling.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "comm/communicator.hpp"
#include "fl/experiment.hpp"
#include "io/config_parser.hpp"
#include "io/results_writer.hpp"
#include "io/run_control.hpp"

extern "C" void openblas_set_num_threads(int);

using namespace fedsilo;

int main(int argc, char** argv) {
  // One BLAS thread per rank: ranks are the parallelism (a second BLAS thread per rank made PyTorch
  // 3x slower on batch-32 GEMMs on this machine, PERF_BASELINE.md).
  openblas_set_num_threads(1);
  MpiEnvironment env(argc, argv);
  std::string partial;
  int code = 0;
  {
    Communicator comm = Communicator::world();
    try {
      ParseOutcome parsed;
      coordinated(comm, [&] { parsed = parseCommandLine(argc, argv); });
      if (parsed.action != ParseOutcome::Action::Run) {
        if (comm.isRoot()) std::fputs(parsed.text.c_str(), stdout);
        return 0;
      }
      partial = parsed.config.output.path + ".partial";
      code = runExperiment(parsed.config, comm);
    } catch (const PeerFailure& e) {
      code = static_cast<int>(e.code());
    } catch (const Error& e) {
      std::fprintf(stderr, "fedsilo: error: %s\n", e.what());
      code = static_cast<int>(e.code());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fedsilo: error: %s\n", e.what());
      code = 1;
    }
    if (code != 0 && !errorWasAgreed()) {
      // The failure happened outside a coordinated region: the other ranks may be blocked in a
      // collective, so remove the partial results file and take every rank down now.
      if (!partial.empty()) std::remove(partial.c_str());
      MpiEnvironment::abort(code);
    }
  }
  return code;
}
