// One federated experiment on this rank: data, clients, model, algorithm, and the round loop.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/placement.hpp"
#include "core/config.hpp"
#include "core/record_sink.hpp"
#include "data/dataset.hpp"
#include "fl/algorithm.hpp"
#include "fl/client.hpp"
#include "fl/local_trainer.hpp"

namespace fedsilo {

// Per-round figures (replicated on every rank after the round).
struct RoundSummary {
  int round = 0;
  bool evaluated = false;  // false (eval.every): the accuracy and loss figures are NaN
  double globalAccuracy = 0.0, globalLoss = 0.0;
  double meanClientAccuracy = 0.0, worst10 = 0.0;
  double seconds = 0.0, trainSeconds = 0.0;
  int participants = 0;
};

class Experiment {
 public:
  // Loads the dataset, partitions it, builds the model and the algorithm. Collective; failures on any
  // rank are agreed on (every rank throws).
  Experiment(const ExperimentConfig& cfg, const Communicator& comm);
  ~Experiment();

  // Runs rounds [firstRound, cfg.rounds). `onRound` (may be empty) is called on every rank after each
  // round; returning false stops the run early (checkpoint/pre-emption).
  void run(RecordSink& sink, const std::function<bool(const RoundSummary&)>& onRound = {});
  // Writes /clients/* (collective). Called by run() before the first round.
  void writeClientTable(RecordSink& sink);
  // Writes /summary, /model, /sensitivity and the algorithm's own records (collective).
  void writeFinal(RecordSink& sink);
  // Saves or restores (collective, symmetric) the driver's state between rounds: the round to run
  // next, the global model, the local clients' last figures and sensitivity rows (by client id, so a
  // checkpoint restores at any rank count), the round times, then the algorithm's own state.
  void checkpoint(StateArchive& ar);

  const std::vector<float>& global() const { return global_; }
  const FlContext& context() const { return *ctx_; }
  const std::vector<double>& lastClientAccuracy() const { return lastAccLocal_; }  // local clients
  const Placement& placement() const { return placement_; }
  Algorithm& algorithm() { return *alg_; }
  int nextRound() const { return nextRound_; }

 private:
  RoundSummary runRound(int round, RecordSink& sink);
  void evaluateClients(std::vector<double>& acc, std::vector<double>& f1, std::vector<double>& loss);
  void evaluateGlobal(double& acc, double& loss);

  const ExperimentConfig& cfg_;
  const Communicator& comm_;
  Placement placement_;
  DataBundle data_;
  std::vector<ClientData> clients_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<LocalTrainer> trainer_;
  std::unique_ptr<Algorithm> alg_;
  std::unique_ptr<FlContext> ctx_;
  std::vector<float> global_;
  ExactSum acc_;
  int nextRound_ = 0;
  // Local clients' figures of the last evaluation, and sensitivity rows (round 0 / last).
  std::vector<double> lastAccLocal_, lastF1Local_, lastLossLocal_;
  std::vector<double> sensRound0_, sensFinal_;  // local clients x L
  std::vector<double> roundSeconds_;
  double lastGlobalAcc_ = 0.0;
  // The last round's global evaluation, reused by writeFinal (true only in the process that ran it).
  double lastGlobalLoss_ = 0.0;
  bool finalGlobalEvaluated_ = false;
  bool everEvaluated_ = false;
};

}  // namespace fedsilo
