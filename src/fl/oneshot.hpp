// One-shot aggregation (GEMS and the baselines it is compared with, Guha & Smith 2018, Sec. 4):
// every client trains its local model once, to convergence (gems.local_epochs), sends it (or what
// the algorithm needs of it) once, and rank 0 builds one model. The same public-data fine-tuning is
// applied to every one-shot algorithm so that the comparison is fair:
//   the public sample is drawn from the pooled validation data of all clients (Purpose::Public: one
//   permutation of the pool, a sample of size S is its first S entries, so samples are nested), and
//   the model's LAST dense block is trained on it for gems.finetune_epochs (for logreg: the whole
//   model; for an MLP: the last layer, as in the paper's NN experiments).
// Baselines here: `average` (naive parameter average of the local models), `ensemble` (majority vote
// of the local models, random tie-break), `oneshot_local` (each local model alone, the paper's
// "Local": accuracies are means over the clients' models), `global` (one model on the pooled data)
// and `public_only` (a model trained on the public sample alone). GEMS itself is in fl/gems.hpp.
//
// Records (docs/algorithms.md, "GEMS and one-shot baselines"): /gems/finetune/samples int64 [S],
// /gems/finetune/accuracy [S] (test accuracy after fine-tuning on each size in gems.finetune_sizes,
// size 0 = no fine-tuning), /gems/accuracy_before, /gems/accuracy_after, /gems/client_accuracy [K].
#pragma once
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "fl/algorithm.hpp"
#include "fl/local.hpp"

namespace fedsilo {

// gems.* options, shared by every one-shot algorithm (declared once, with the gems entry).
struct GemsOptions {
  int localEpochs = 40;
  std::string init = "shared";     // shared | independent: where each client's local model starts
  double epsilon = 0.4;            // Q(w) = 1 iff validation accuracy >= epsilon
  double rMax = 4000.0;
  double tol = 0.01;
  int samples = 500;
  std::string shape = "sphere";    // sphere | ellipsoid
  int fisherSamples = 200;
  double fisherProp = 1.0;
  std::string mode = "auto";       // auto | convex | neuron
  double neuronEpsilon = 1.0;
  double neuronTol = 1.0;
  int clusters = 75;
  int kmeansIters = 100;
  int headEpochs = 10;
  double intersectLr = 0.01;
  int intersectSteps = 10000;
  int publicSamples = 0;
  int finetuneEpochs = 5;
  double finetuneLr = 0.0;         // 0: train.lr
  int publicEpochs = 0;            // public_only: 0 = finetune_epochs (the fine-tuning recipe)
  std::vector<int> finetuneSizes{0};

  static GemsOptions parse(const ExperimentConfig& cfg);
};
std::vector<OptionSpec> gemsOptionSpecs();

// Flat serialisation of replicated state into the vector<double> that the driver broadcasts.
class StatePacker {
 public:
  void scalar(double v) { out_.push_back(v); }
  void doubles(const std::vector<double>& v);
  void floats(const std::vector<float>& v);
  std::vector<double> take() { return std::move(out_); }

 private:
  std::vector<double> out_;
};

class StateReader {
 public:
  explicit StateReader(const std::vector<double>& s) : s_(s) {}
  double scalar();
  std::vector<double> doubles();
  std::vector<float> floats();
  bool done() const { return pos_ == s_.size(); }

 private:
  const std::vector<double>& s_;
  std::size_t pos_ = 0;
};

// Evaluation helpers shared by the one-shot algorithms.
IndexList allIndices(Index n);
// Argmax predictions of `model` on data[idx] (evaluation mode).
std::vector<std::int32_t> predictLabels(Model& model, LocalTrainer& trainer, const Dataset& data, const IndexList& idx,
                                        int batch);
// Majority vote over members' predictions (votes: members x n), ties broken uniformly at random.
std::vector<std::int32_t> majorityVote(const std::vector<std::vector<std::int32_t>>& votes, int numClasses, Rng& tie);
double accuracyOf(const std::vector<std::int32_t>& pred, const Dataset& data, const IndexList& idx);

class OneShot : public Algorithm {
 public:
  // Parses gems.* and checks the one-shot protocol (ConfigError): `rounds` rounds, every client.
  OneShot(const ExperimentConfig& cfg, std::string name, int rounds = 1);
  std::string name() const override { return name_; }
  void setup(const FlContext& ctx, std::vector<float>& global) override;
  std::vector<char> reducedBlocks(const FlContext& ctx, int round) const override;
  bool evalParams(const FlContext& ctx, int client, const std::vector<float>& global, float* out) const override;
  void finishClient(ClientContext& c) override;
  std::vector<double> serverState() const override;
  void setServerState(const std::vector<double>& state) override;
  void checkpoint(StateArchive& ar) override;
  void record(const FlContext& ctx, RecordSink& sink) const override;

  const GemsOptions& options() const { return opt_; }
  const std::vector<double>& finetuneAccuracy() const { return sweepAcc_; }
  double accuracyBefore() const { return accBefore_; }
  double accuracyAfter() const { return accAfter_; }

 protected:
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  // The model of the driver's architecture with a trainer over the training pool, for rank 0's server
  // work and for the algorithms' own client evaluations (built on first use).
  struct Workbench {
    std::unique_ptr<Model> model;
    std::unique_ptr<LocalTrainer> trainer;
  };
  Workbench& bench(const FlContext& ctx) const;
  static Workbench makeBench(const FlContext& ctx, const ModelConfig& mcfg);

  // Sets c.model to where client c's local model starts: the experiment's initial model
  // (gems.init = shared) or the client's own draw, Rng(seed, client, -1, Init) (independent).
  void startLocal(ClientContext& c) const;
  // Local training of c.model from startLocal for gems.local_epochs on the client's training split,
  // through the shared LocalTrainer; keeps a copy for evalParams when keepLocal_. Returns the mean
  // training loss.
  double trainLocal(ClientContext& c);
  TrainOptions localTrainOptions(const ExperimentConfig& cfg) const;
  // The first S samples of the public pool.
  IndexList publicSample(int S) const;
  // Trains the last dense block of `model` (all earlier blocks frozen exactly, also under weight decay
  // and momentum) on `sample` for gems.finetune_epochs.
  void fineTuneLastBlock(const FlContext& ctx, Model& model, LocalTrainer& trainer, const IndexList& sample) const;
  double testAccuracy(const FlContext& ctx, Model& model, LocalTrainer& trainer) const;
  // For every size in gems.finetune_sizes: test accuracy of `params` after fine-tuning on that many
  // public samples. Also sets accBefore_ (no fine-tuning) and accAfter_ (gems.public_samples) and
  // returns the parameters fine-tuned on gems.public_samples (params itself when 0).
  std::vector<float> sweep(const FlContext& ctx, Model& model, LocalTrainer& trainer, const std::vector<float>& params);
  // Accuracy of the algorithm's final model on client c's test split (own evaluation path).
  virtual double clientAccuracy(ClientContext& c);
  const Dataset& testSetOf(const FlContext& ctx, const ClientData& c) const { return c.testFromTestSet ? ctx.data.test : ctx.data.train; }
  // RuntimeError unless all K clients' updates arrived.
  void requireAllClients(std::size_t received, const FlContext& ctx) const;

  // Subclass state beyond the common fields (replicated, in serverState order).
  virtual void packExtra(StatePacker& p) const { (void)p; }
  virtual void unpackExtra(StateReader& r) { (void)r; }
  virtual void recordExtra(const FlContext& ctx, RecordSink& sink) const {
    (void)ctx;
    (void)sink;
  }

  std::string name_;
  GemsOptions opt_;
  std::vector<float> init_;
  IndexList publicPool_;        // the pooled validation data, permuted (Purpose::Public)
  PersonalStore local_;         // local models of this rank's clients (when keepLocal_)
  bool keepLocal_ = false;
  bool roundDone_ = false;      // the one-shot server step has run (replicated)
  // Replicated results.
  std::vector<double> sweepAcc_;
  double accBefore_ = kNaN, accAfter_ = kNaN;
  std::vector<float> final_;    // the final single model in the driver's layout (empty if none)
  // This rank's clients: accuracy of the final model on their test split (finishClient).
  std::unordered_map<int, double> clientAcc_;
  mutable Workbench bench_;
};

// Naive average: w = (1/K) sum_k w_k (unweighted, as in the paper), through the driver's exact mean.
class OneShotAverage : public OneShot {
 public:
  explicit OneShotAverage(const ExperimentConfig& cfg) : OneShot(cfg, "average") {}
  std::vector<char> reducedBlocks(const FlContext& ctx, int round) const override;
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override;
};

// Each client's local model alone; the figures are means over the K models on the test set.
class OneShotLocal : public OneShot {
 public:
  explicit OneShotLocal(const ExperimentConfig& cfg, const std::string& name = "oneshot_local");
  bool hasGlobalModel() const override { return false; }
  int payloadSize() const override { return static_cast<int>(numParams_); }
  void setup(const FlContext& ctx, std::vector<float>& global) override;
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override;

 protected:
  double clientAccuracy(ClientContext& c) override;
  void packExtra(StatePacker& p) const override { p.doubles(memberAcc_); }
  void unpackExtra(StateReader& r) override { memberAcc_ = r.doubles(); }
  void recordExtra(const FlContext& ctx, RecordSink& sink) const override;
  Index numParams_ = 0;
  std::vector<double> memberAcc_;  // K x S: member k fine-tuned on size s
};

// Majority vote of the K local models (random tie-break, Purpose::Tie). Every evaluating rank needs
// all K models: they reach rank 0 as payload and every rank through serverState (K x P doubles).
class OneShotEnsemble : public OneShotLocal {
 public:
  explicit OneShotEnsemble(const ExperimentConfig& cfg);
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override;

 protected:
  double clientAccuracy(ClientContext& c) override;
  void packExtra(StatePacker& p) const override;
  void unpackExtra(StateReader& r) override;
  std::vector<double> members_;  // K x P
};

// One model trained on the pooled training data of all clients (every rank holds the whole dataset),
// data-parallel across all ranks in rankUpdate (LocalTrainer with DataParallel: gems.global_shard
// samples per gradient shard, an exact allreduce per step), so the model is the same at any rank
// count; rank 0 then runs the fine-tuning sweep on it. gems.global_shard = 0 trains it on rank 0
// alone instead (the plain serial loop: faster when an SGD step is shorter than an allreduce).
class OneShotGlobal : public OneShot {
 public:
  explicit OneShotGlobal(const ExperimentConfig& cfg);
  bool usesRankUpdate() const override { return shard_ > 0; }
  void rankUpdate(RankContext& c) override;
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override;

 private:
  // Trains the shared initial model on the union of the clients' training indices into trained_;
  // data-parallel with dp (every rank), serially without.
  void trainPooled(const FlContext& ctx, const DataParallel* dp);

  int shard_;
  std::vector<float> trained_;  // after rankUpdate, on every rank
};

// A model trained on the public sample alone, all layers from the shared initial model, with the
// fine-tuning recipe (gems.finetune_lr, gems.public_epochs, default gems.finetune_epochs): the paper's
// "raw" baseline. finetune/accuracy[s] is the model trained on size s.
class OneShotPublicOnly : public OneShot {
 public:
  explicit OneShotPublicOnly(const ExperimentConfig& cfg) : OneShot(cfg, "public_only") {}
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override;
};

std::unique_ptr<Algorithm> makeOneShotAverage(const ExperimentConfig& cfg);
std::unique_ptr<Algorithm> makeOneShotLocal(const ExperimentConfig& cfg);
std::unique_ptr<Algorithm> makeOneShotEnsemble(const ExperimentConfig& cfg);
std::unique_ptr<Algorithm> makeOneShotGlobal(const ExperimentConfig& cfg);
std::unique_ptr<Algorithm> makeOneShotPublicOnly(const ExperimentConfig& cfg);

// ConfigError unless cfg.rounds == rounds, every client takes part (fl.clients_per_round 0 or >= K)
// and fl.dropout == 0.
void requireOneShotConfig(const ExperimentConfig& cfg, const std::string& name, int rounds);

}  // namespace fedsilo
