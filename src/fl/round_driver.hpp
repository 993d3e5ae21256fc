// The round driver: one federated round as named steps, on every rank.
//
//   layoutReduction        which clients and blocks take part; where each sum goes in the one reduction
//   trainLocalClients      every selected client of this rank trains (Algorithm::clientUpdate), its update
//                          is checked for NaN/Inf and added to the exact accumulator
//   serverStepAndBroadcast exact reduction and gathers to rank 0, Algorithm::serverUpdate there, broadcast
//                          of the global parameters and the server state
//   participantShares      each participant's share of the aggregate
//   evaluateRound          every client with the parameters it would use, the global model on the test set
//                          (every evaluated round, or the last only: eval.global)
//   recordRound            one /rounds row
//
// Privacy (fl/round_privacy.hpp), update compression (fl/compressed_upload.hpp), robustness
// (fl/robust_round.hpp: attacks, robust aggregators) and the simulated clock (fl/sim_round.hpp: bytes,
// simulated seconds, deadlines) join at named points inside these steps.
//
// The driver names no algorithm: everything algorithm-specific goes through the Algorithm interface
// (fl/algorithm.hpp). Experiment (fl/experiment.hpp) builds the pieces a round works on and owns them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/placement.hpp"
#include "core/config.hpp"
#include "core/exact_sum.hpp"
#include "core/record_sink.hpp"
#include "core/state_archive.hpp"
#include "core/types.hpp"
#include "data/dataset.hpp"
#include "fl/algorithm.hpp"
#include "fl/client.hpp"
#include "fl/compressed_upload.hpp"
#include "fl/eval_selection.hpp"
#include "fl/local_trainer.hpp"
#include "fl/server_optimizer.hpp"
#include "fl/robust_round.hpp"
#include "fl/round_privacy.hpp"
#include "fl/sim_round.hpp"

namespace fedsilo {

// Per-round figures (replicated on every rank after the round).
struct RoundSummary {
  int round = 0;
  bool evaluated = false;  // false (eval.every): the accuracy and loss figures are NaN
  double globalAccuracy = 0.0, globalLoss = 0.0;
  double meanClientAccuracy = 0.0, worst10 = 0.0;
  double seconds = 0.0, trainSeconds = 0.0;
  int participants = 0;
  double epsilon = kNaN;  // privacy loss so far (NaN without DP)
  double simSeconds = kNaN, simTime = kNaN;  // the round and the total on the simulated clock (NaN: off)
};

// The points where a test may make one rank misbehave (FEDSILO_FAULT, app/fault_injection). Production
// runs use these defaults, which change nothing.
class RunHooks {
 public:
  virtual ~RunHooks() = default;
  // The data configuration this rank loads.
  virtual DataConfig dataToLoad(const DataConfig& configured) const { return configured; }
  // The training settings this rank's clients use in `round` (round = rounds: the end-of-training hooks).
  virtual TrainConfig training(int round, const TrainConfig& configured) const {
    (void)round;
    return configured;
  }
  // Called on every rank after each round (run control).
  virtual void afterRound(int round) const { (void)round; }
};

// The hooks of a production run.
const RunHooks& noRunHooks();

// Whether round `round` is evaluated: every eval.every rounds and always the last one.
bool isEvaluationRound(const ExperimentConfig& cfg, int round);

// Everything a round reads or updates. Experiment builds each piece once and owns it.
struct RoundParts {
  const ExperimentConfig& cfg;
  const Communicator& comm;
  const Placement& placement;
  const DataBundle& data;
  const std::vector<ClientData>& clients;  // all K clients
  Model& model;                            // the working model of this rank
  LocalTrainer& trainer;
  Algorithm& alg;
  const FlContext& ctx;
  std::vector<float>& global;              // the global parameters, replicated
  const RunHooks& hooks;
};

// The local clients' figures of one evaluation, in local-client order (NaN: not evaluated): the test
// split (accuracy, f1, loss) and the validation split (valAccuracy, valLoss).
struct ClientFigures {
  std::vector<double> accuracy, f1, loss, valAccuracy, valLoss;
  explicit ClientFigures(int localClients = 0);
  void set(int i, const ClientEvaluation& e);
  ClientEvaluation at(int i) const;
};

// The evaluation columns of a /rounds row: round, global_accuracy, global_loss and the clients' figures
// (the synchronous round's and the asynchronous version's, fl/async_driver.hpp).
void appendEvaluationRow(RecordSink& sink, const RoundSummary& summary, const ClientFigures& figures);

// The global model's figures on the test set (NaN without a global model or test samples).
struct GlobalFigures {
  double accuracy = 0.0, loss = 0.0;
};

class RoundDriver {
 public:
  explicit RoundDriver(const RoundParts& parts);
  ~RoundDriver();

  // Runs round `round` (collective) and appends its /rounds row to `sink`.
  RoundSummary runRound(int round, RecordSink& sink);
  // After the last round: the algorithm's end-of-training client hooks (FedBABU's fine-tuning, ...),
  // then every local client is evaluated again (collective).
  void finishTraining();
  // The global model on the test set: fixed chunks, chunk c on rank c % P, integer counts and exact
  // loss sums, so the figures are the same at any rank count (collective).
  GlobalFigures evaluateGlobal();
  // The final global model's figures: the last round's evaluation when it ran in this process (the
  // end-of-training hooks never change the global model), else a fresh one (collective).
  GlobalFigures finalGlobal();
  // Saves or restores (collective, symmetric) the driver's state between rounds: the round to run
  // next, the global model, the local clients' last figures and sensitivity rows (by client id, so a
  // checkpoint restores at any rank count), the round times and, with train.optimizer_state = keep,
  // the local clients' optimizer states.
  void checkpoint(StateArchive& ar);
  // The privacy records (/privacy/*; collective; nothing when privacy is off), and the banner line.
  void recordPrivacy(RecordSink& sink) const;
  // The robustness records (/clients/malicious; collective; nothing when robustness is off).
  void recordRobust(RecordSink& sink) const;
  // The simulated deployment's records (/clients/* profile, /summary/*_to_target; collective).
  void recordSystem(RecordSink& sink) const { sim_->record(sink); }
  // The evaluation step of a round in which no client was evaluated after its local training, run when
  // `due` (the asynchronous driver's versions, fl/async_driver.hpp): fills the summary's figures
  // (NaN when not due) and `figures` (collective).
  void evaluateAfterAggregation(int round, bool due, RoundSummary& summary, ClientFigures& figures);
  // The simulated clock's records (the asynchronous driver notes its versions' accuracy in it).
  SimRound& simRound() { return *sim_; }
  // The compression totals (/summary/*bytes*; collective; nothing when fl.compress = none).
  void recordCompression(RecordSink& sink) const;
  // The last round's encoded sizes (replicated); nullptr when fl.compress = none.
  const EncodedRoundBytes* encodedRoundBytes() const { return compressed_ ? &compressed_->roundBytes() : nullptr; }
  std::string privacyDescription() const { return privacy_ ? privacy_->describe() : ""; }

  int nextRound() const { return nextRound_; }
  const ClientFigures& lastClientFigures() const { return lastFigures_; }
  const std::vector<double>& sensitivityRound0() const { return sensRound0_; }  // local clients x blocks
  const std::vector<double>& sensitivityFinal() const { return sensFinal_; }
  const std::vector<double>& roundSeconds() const { return roundSeconds_; }
  // The model each local client's summary reports (eval.select; fl/eval_selection.hpp).
  const ClientSelection& selection() const { return selection_; }
  const OptimizerStateStore& optimizerStates() const { return optimizerStates_; }

 private:
  // The one exact reduction of a round: [sum w v over the reduced blocks | sum w per block | sums].
  struct ReductionLayout {
    std::vector<int> selected;     // clients taking part (ascending, the same on every rank)
    std::vector<char> reduced;     // per block: reduced this round
    std::vector<Index> offset;     // per block: offset of its values in the accumulator (-1: not reduced)
    Index vectorSize = 0;          // values of the reduced blocks
    int numBlocks = 0, numSums = 0, payloadSize = 0;
    int numPrivacySums = 0;        // the privacy step's sums, after the algorithm's
    std::size_t weightAt(int block) const { return static_cast<std::size_t>(vectorSize + block); }
    std::size_t sumAt(int s) const { return static_cast<std::size_t>(vectorSize + numBlocks + s); }
    std::size_t privacySumsAt() const { return sumAt(numSums); }
    std::size_t size() const { return static_cast<std::size_t>(vectorSize + numBlocks + numSums + numPrivacySums); }
  };
  // What this rank's clients sent in a round, in local-client order.
  struct LocalRound {
    std::vector<double> participated;              // 1 sent, -1 diverged and dropped, -2 missed the deadline, 0 neither
    std::vector<std::vector<double>> blockWeight;  // empty: sent nothing
    std::vector<double> payloadRows;               // rows [client id, payload...]
    std::vector<double> sensitivityRows;           // rows [client id, per-block sensitivity...]
    ClientFigures afterLocal;                      // eval.point = after_local: clients evaluated after training
    std::vector<char> evaluatedAfterLocal;         // per local client: afterLocal holds its figures
    explicit LocalRound(int localClients)
        : participated(localClients, 0.0),
          blockWeight(localClients),
          afterLocal(localClients),
          evaluatedAfterLocal(static_cast<std::size_t>(localClients), 0) {}
  };

  ReductionLayout layoutReduction(int round) const;
  ClientContext clientContextFor(int client, int round);
  void runRankUpdate(int round);
  LocalRound trainLocalClients(int round, const ReductionLayout& layout);
  void trainClient(int client, int round, const ReductionLayout& layout, LocalRound& local);
  // What became of a client's update: sent, dropped as diverged (fl.skip_diverged), or dropped for
  // missing the deadline (fl.deadline_seconds).
  enum class UpdateOutcome { Sent, Diverged, MissedDeadline };
  UpdateOutcome updateOrDrop(ClientContext& clientContext, const ReductionLayout& layout, ClientUpdate& update);
  RoundPayload roundPayload(const ReductionLayout& layout) const;
  void checkFinite(const ClientUpdate& update, int client, int round, const ReductionLayout& layout) const;
  void accumulate(const ClientUpdate& update, const ReductionLayout& layout, ExactSum& into);
  void sendUpdate(int client, int round, const ReductionLayout& layout, ClientUpdate& update);
  void recordSensitivity(int client, int round, LocalRound& local);
  std::vector<double> serverStepAndBroadcast(int round, const ReductionLayout& layout, const LocalRound& local);
  ServerInput serverInput(int round, const ReductionLayout& layout, const std::vector<double>& payloads,
                          const std::vector<double>& sensitivity) const;
  int countParticipants(const LocalRound& local) const;
  std::vector<double> participantShares(const ReductionLayout& layout, const LocalRound& local,
                                        const std::vector<double>& blockWeightSum) const;
  // Every local client not marked in `done` (null: none) with the parameters it would use now (the
  // ClientContext of its own evaluation is of round `round`); with offerRound >= 0 each evaluation is
  // offered to the selection as that round's model.
  ClientFigures evaluateClients(int round, const std::vector<char>* done = nullptr, int offerRound = -1);
  void startTrainingProgress(int round, const std::vector<int>& selected) const;
  void startEvaluationProgress(int round) const;
  ClientEvaluation evaluateLoadedModel(const ClientData& c);
  void evaluateAfterLocal(int client, int round, LocalRound& local);
  void evaluateRound(int round, bool due, const LocalRound& local, RoundSummary& summary, ClientFigures& figures);
  void evaluateGlobalIfDue(int round, RoundSummary& summary);
  void recordRound(RecordSink& sink, const RoundSummary& summary, const ClientFigures& figures,
                   const LocalRound& local, const std::vector<double>& shares) const;

  // The protocol state kept across rounds: the server optimizer's moments and the selection.
  void checkpointProtocolState(StateArchive& ar);

  bool isFirst(int round) const { return round == 0; }
  bool isLast(int round) const { return round == p_.cfg.rounds - 1; }
  int localIndex(int client) const { return p_.placement.slot(client); }
  int numLocal() const { return p_.placement.count(p_.comm.rank()); }

  RoundParts p_;
  std::unique_ptr<RoundPrivacy> privacy_;  // nullptr: privacy off (fl/round_privacy.hpp)
  std::unique_ptr<RobustRound> robust_;    // nullptr: robustness off (fl/robust_round.hpp)
  std::unique_ptr<SimRound> sim_;          // bytes always; the clock with the system model on (fl/sim_round.hpp)
  std::unique_ptr<CompressedUpload> compressed_;  // nullptr: fl.compress = none (fl/compressed_upload.hpp)
  ExactSum acc_;
  int nextRound_ = 0;
  ClientFigures lastFigures_;                   // the local clients' last evaluation
  std::vector<double> sensRound0_, sensFinal_;  // local clients x blocks
  std::vector<double> roundSeconds_;
  GlobalFigures lastGlobal_;                    // the last evaluated round's global figures
  bool finalGlobalEvaluated_ = false;           // the last round was evaluated in this process
  bool everEvaluated_ = false;
  std::unique_ptr<ServerOptimizer> serverOptimizer_;  // fl.server_optimizer (null: none); state on rank 0
  ClientSelection selection_;
  OptimizerStateStore optimizerStates_;  // train.optimizer_state = keep: the local clients' moments
};

}  // namespace fedsilo
