#include "io/run_control.hpp"

#include <cmath>
#include <cstdio>

#include "core/timer.hpp"
#include "fl/experiment.hpp"
#include "io/results_writer.hpp"

namespace fedsilo {

namespace {

void writeRootAttributes(ResultsWriter& w, const ExperimentConfig& cfg, const Communicator& comm) {
  w.writeRootAttribute("format", std::string("fedsilo-results-1"));
  w.writeRootAttribute("version", std::string(FEDSILO_VERSION));
  w.writeRootAttribute("config", cfg.resolvedIni);
  w.writeRootAttribute("algorithm", cfg.algorithm);
  w.writeRootAttribute("dataset", cfg.data.dataset);
  w.writeRootAttribute("model", cfg.model.name);
  w.writeRootAttribute("seed", static_cast<std::int64_t>(cfg.seed));
  w.writeRootAttribute("num_clients", static_cast<std::int64_t>(cfg.clients));
  w.writeRootAttribute("num_ranks", static_cast<std::int64_t>(comm.size()));
  w.writeRootAttribute("num_rounds", static_cast<std::int64_t>(cfg.rounds));
}

std::string fmtAcc(double x) {
  if (!std::isfinite(x)) return "   n/a";
  char b[32];
  std::snprintf(b, sizeof b, "%.4f", x);
  return b;
}

}  // namespace

int runExperiment(const ExperimentConfig& cfg, const Communicator& comm) {
  Timer total;
  Experiment exp(cfg, comm);
  std::unique_ptr<ResultsWriter> writer;
  coordinated(comm, [&] { writer = std::make_unique<ResultsWriter>(cfg.output.path, comm, exp.placement()); });
  writeRootAttributes(*writer, cfg, comm);
  if (comm.isRoot()) {
    std::printf("fedsilo %s: %s on %s, model %s (%lld parameters), %d clients on %d ranks, %d rounds\n", FEDSILO_VERSION,
                cfg.algorithm.c_str(), cfg.data.dataset.c_str(), cfg.model.name.c_str(),
                static_cast<long long>(exp.context().numParams), cfg.clients, comm.size(), cfg.rounds);
    std::printf("%6s %10s %10s %10s %9s %9s\n", "round", "global_acc", "client_acc", "worst10", "train_s", "round_s");
    std::fflush(stdout);
  }
  exp.run(*writer, [&](const RoundSummary& rs) {
    if (comm.isRoot() && rs.evaluated) {
      std::printf("%6d %10s %10s %10s %9.3f %9.3f\n", rs.round, fmtAcc(rs.globalAccuracy).c_str(),
                  fmtAcc(rs.meanClientAccuracy).c_str(), fmtAcc(rs.worst10).c_str(), rs.trainSeconds, rs.seconds);
      std::fflush(stdout);
    }
    return true;
  });
  exp.writeFinal(*writer);
  writer->commit();
  if (comm.isRoot()) {
    std::printf("done in %.2f s; results in %s\n", total.seconds(), cfg.output.path.c_str());
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace fedsilo
