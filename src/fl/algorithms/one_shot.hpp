// One-shot aggregation (GEMS and the baselines it is compared with, Guha & Smith 2018, Sec. 4):
// every client trains its local model once, to convergence (gems.local_epochs), sends it (or what
// the algorithm needs of it) once, and rank 0 builds one model. The same public-data fine-tuning is
// applied to every one-shot algorithm so that the comparison is fair:
//   the public sample is drawn from the pooled validation data of all clients (Purpose::Public: one
//   permutation of the pool, a sample of size S is its first S entries, so samples are nested), and
//   the model's LAST dense block is trained on it for gems.finetune_epochs (for logreg: the whole
//   model; for an MLP: the last layer, as in the paper's NN experiments).
// This is their shared base. The baselines, one file each: `average` (naive parameter average of the
// local models), `ensemble` (majority vote of the local models, random tie-break), `oneshot_local`
// (each local model alone, the paper's "Local": accuracies are means over the clients' models),
// `global` (one model on the pooled data) and `public_only` (a model trained on the public sample
// alone). GEMS itself is in fl/algorithms/gems.hpp.
//
// Records (docs/algorithms.md, "GEMS and one-shot baselines"): /gems/finetune/samples int64 [S],
// /gems/finetune/accuracy [S] (test accuracy after fine-tuning on each size in gems.finetune_sizes,
// size 0 = no fine-tuning), /gems/accuracy_before, /gems/accuracy_after, /gems/client_accuracy [K].
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "fl/algorithm.hpp"
#include "core/types.hpp"
#include "fl/personal_store.hpp"
#include "fl/state_packer.hpp"

namespace fedsilo {

// gems.init: where each client's local model starts.
enum class LocalInit { Shared, Independent };
// gems.shape: the good-enough set around a GEMS centre.
enum class BallShape { Sphere, Ellipsoid };
// gems.mode: convex GEMS, neuron-wise GEMS, or neuron-wise for a one-hidden-layer mlp only.
enum class GemsMode { Auto, Convex, Neuron };

// The options of the one-shot protocol, shared by every one-shot algorithm and declared once with
// the gems entry; their keys are gems.* because the GEMS paper defines the protocol and its baselines.
// The GEMS-only fields (epsilon .. intersectSteps) are parsed, and so validated, for every one of them.
struct OneShotOptions {
  int localEpochs = 40;
  LocalInit init = LocalInit::Shared;
  double epsilon = 0.4;  // Q(w) = 1 iff validation accuracy >= epsilon
  double rMax = 4000.0;
  double tol = 0.01;
  int samples = 500;
  BallShape shape = BallShape::Sphere;
  int fisherSamples = 200;
  double fisherProp = 1.0;
  GemsMode mode = GemsMode::Auto;
  double neuronEpsilon = 1.0;
  double neuronTol = 1.0;
  int clusters = 75;
  int kmeansIters = 100;
  int headEpochs = 10;
  double intersectLr = 0.01;
  int intersectSteps = 10000;
  int publicSamples = 0;
  int finetuneEpochs = 5;
  double finetuneLr = 0.0;  // 0: train.lr
  // The fine-tuning optimizer; empty: train.optimizer (with the train.* settings either way).
  std::optional<OptimizerKind> finetuneOptimizer;
  int publicEpochs = 0;     // public_only: 0 = finetune_epochs (the fine-tuning recipe)
  std::vector<int> finetuneSizes{0};

  static OneShotOptions parse(const ExperimentConfig& cfg);
};
std::vector<OptionSpec> oneShotOptionSpecs();
// The baselines' round count (AlgorithmEntry::oneShotRounds): every client trains and sends once.
inline int oneShotSingleRound(const ExperimentConfig&) { return 1; }

// ConfigError unless cfg.rounds == rounds, every client takes part (fl.clients_per_round 0 or >= K)
// and fl.dropout == 0.
void requireOneShotConfig(const ExperimentConfig& cfg, const std::string& name, int rounds);

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
  bool acceptsDroppedSilos() const override { return false; }  // every client's one upload
  // The local models, when the algorithm keeps them (keepLocal_): the clients are evaluated with them.
  PersonalStore* personalStore() override { return keepLocal_ ? &local_ : nullptr; }
  void finishClient(ClientContext& c) override;
  std::vector<double> serverState() const override;
  void setServerState(const std::vector<double>& state) override;
  void record(const FlContext& ctx, RecordSink& sink) const override;

  const OneShotOptions& options() const { return opt_; }
  const std::vector<double>& finetuneAccuracy() const { return sweepAcc_; }
  double accuracyBefore() const { return accBefore_; }
  double accuracyAfter() const { return accAfter_; }

 protected:
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
  // through the shared LocalTrainer; keeps a copy in local_ when keepLocal_. Returns the mean
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
  OneShotOptions opt_;
  std::vector<float> init_;
  IndexList publicPool_;    // the pooled validation data, permuted (Purpose::Public)
  PersonalStore local_;     // local models of this rank's clients (when keepLocal_)
  bool keepLocal_ = false;  // set by algorithms without a global model (their clients use local_)
  // Replicated results.
  std::vector<double> sweepAcc_;
  double accBefore_ = kNaN, accAfter_ = kNaN;
  // This rank's clients: accuracy of the final model on their test split (finishClient).
  std::unordered_map<int, double> clientAcc_;
  mutable Workbench bench_;
};

}  // namespace fedsilo
