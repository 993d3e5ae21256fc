// The one local training loop shared by every algorithm, and client/global evaluation.
// Algorithms change the objective only through a GradientHook (FedProx's proximal term, Ditto's
// regulariser, pFedMe's Moreau envelope, frozen heads), never by copying this loop.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/config.hpp"
#include "core/exact_sum.hpp"
#include "core/rng.hpp"
#include "data/augment.hpp"
#include "data/dataset.hpp"
#include "fl/dp_sgd.hpp"
#include "nn/model.hpp"
#include "optim/optimizer.hpp"

namespace fedsilo {

// Called after each backward pass with the current parameters and the batch gradient (flat buffers
// of length n); may modify the gradient in place. A hook may also restrict the optimizer to the
// parameters [trainBegin, trainEnd): the others, and their optimizer state, are not touched at all
// (what a parameter without gradient gets from torch.optim), whatever the optimizer and its weight
// decay (fl/gradient_hooks.hpp: freezeOutsideHook).
struct GradientHook {
  using Function = std::function<void(const float* params, float* grads, std::size_t n)>;
  Function apply;  // may be empty
  std::size_t trainBegin = 0, trainEnd = std::numeric_limits<std::size_t>::max();

  GradientHook() = default;
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, GradientHook>>>
  GradientHook(F&& f) : apply(std::forward<F>(f)) {}  // NOLINT: implicit, like the std::function it wraps
  void operator()(const float* params, float* grads, std::size_t n) const {
    if (apply) apply(params, grads, n);
  }
};

struct TrainStats {
  double meanLoss = 0.0;  // mean of the batch losses
  Index steps = 0;
  Index samples = 0;
};

struct EvalStats {
  Index n = 0;
  Index correct = 0;
  double lossSum = 0.0;
  std::vector<Index> truePos, predCount, labelCount;  // per class, for macro-F1
  explicit EvalStats(int numClasses = 0)
      : truePos(static_cast<std::size_t>(numClasses)), predCount(truePos), labelCount(truePos) {}
  void count(std::int32_t predicted, std::int32_t label);  // one sample
  double accuracy() const;
  double meanLoss() const;
  double macroF1() const;  // over classes present in labels or predictions
};

struct TrainOptions {
  int epochs = 1;
  int batch = 32;
  int maxSteps = 0;  // > 0: stop after this many optimizer steps (pFedMe/q-FedSGD style)
  // The client optimizer and its coefficients (train.optimizer, train.lr, ...).
  OptimizerSettings optimizer;
  // The optimizer's moments: a client's persistent state (train.optimizer_state = keep), continued
  // and updated; nullptr: fresh moments for this run (the trainer's own buffer, cleared first).
  OptimizerState* state = nullptr;
  static TrainOptions from(const TrainConfig& t);
};

// Local training counted in optimizer steps (FedCompass's local steps): one step per mini-batch of
// `batch` samples, so an epoch of `samples` samples is ceil(samples / batch) steps (its last partial
// batch kept, as train() does), each epoch a fresh permutation.
Index stepsPerEpoch(Index samples, int batch);
// The epochs train() must run for `steps` steps (the last one cut short with TrainOptions::maxSteps):
// ceil(steps / stepsPerEpoch), at least 1.
int epochsForSteps(Index samples, int batch, Index steps);
// The samples `steps` consecutive steps process: whole epochs of `samples`, then the first batches of
// the next epoch.
Index samplesOfSteps(Index samples, int batch, Index steps);

// Data-parallel SGD over one index list held by every rank (the `global` baseline): every rank runs
// the same loop over the same batches; each batch is cut into shards of `shardSamples` samples (a
// fixed size, so that the arithmetic does not depend on the number of ranks), shard s of a batch is
// computed by rank s % ranks, and the shards' gradients and losses are summed exactly across ranks
// (allreduceExact) before the same SGD step on every rank. Results are bit-identical at any rank
// count; each step costs one allreduce of numParams + 1 Fixed128 values. Dropout masks are keyed by
// (seed, client, round, shard number), not by rank.
struct DataParallel {
  int rank = 0;
  int ranks = 1;
  int shardSamples = 16;
  std::uint64_t seed = 0;  // dropout key, with the client and round given to train()
  std::function<void(ExactSum&)> allreduceExact;
};

// The statistics of predicted labels `pred` (one per entry of `idx`) against data's labels, for models
// that are not one parameter vector (an ensemble's vote): no loss (NaN), counts and F1 as evaluate().
EvalStats predictionStats(const std::vector<std::int32_t>& pred, const Dataset& data, const IndexList& idx);

class LocalTrainer {
 public:
  LocalTrainer(const Dataset& train, int maxBatch);
  // Augments every training batch of train() (never evaluation, sensitivity or full-batch gradients):
  // sample i of a run gets the map drawn from Rng(seed, client, round, Augment, key) with key a hash
  // of the run's key (one draw from its shuffle stream, taken only when augmenting) and i's position
  // in the run (epoch * n + place in the epoch's order), so it does not depend on the rank.
  void setAugmenter(std::unique_ptr<Augmenter> augmenter, std::uint64_t seed);
  // Runs `opt.epochs` epochs of mini-batch training over `indices` (a fresh permutation per epoch from
  // `shuffle`; last partial batch kept), starting from the model's current parameters.
  // Throws NumericError naming `client` and `round` if a loss becomes NaN or Inf.
  // With `dp`, the batch gradients are computed data-parallel across ranks (see DataParallel); every
  // rank must then call train() with the same arguments.
  TrainStats train(Model& model, const IndexList& indices, const TrainOptions& opt, Rng& shuffle, int client, int round,
                   const GradientHook* hook = nullptr, const DataParallel* dp = nullptr);
  // Full-batch mean loss and gradient over `indices` (q-FFL's F_k, Fisher, ...). Leaves the mean
  // gradient in model.grads().
  double meanLossAndGradient(Model& model, const IndexList& indices, std::vector<float>& gradOut);
  // Evaluation over `indices` of `data` in evaluation mode (dropout off).
  EvalStats evaluate(Model& model, const Dataset& data, const IndexList& indices, int evalBatch = 1000);
  // Gathers a batch into the internal buffer (dim x count), returning a pointer to it.
  const float* gatherBatch(const Dataset& data, const Index* idx, int count);
  const std::int32_t* gatherLabels(const Dataset& data, const Index* idx, int count);
  const Dataset& trainSet() const { return train_; }
  // Samples this trainer has trained on so far, over every call of train() (the progress line's rate).
  std::int64_t samplesTrained() const { return samplesTrained_; }
  // DP-SGD (fl/dp_sgd.hpp) for every train() call until reset with nullptr: Poisson batches and
  // clipped, noised gradients instead of the epoch's shuffled batches. `p` must outlive its use.
  void setPrivateSgd(PrivateSgd* p) { private_ = p; }
  // Label flipping (attack.kind = label_flip, docs/robustness.md): until reset with 0, every label this
  // trainer gathers is mapped c -> numClasses - 1 - c, the malicious silo's poisoned view of its data.
  void setLabelFlip(int numClasses) { flipClasses_ = numClasses; }

 private:
  const Dataset& train_;
  int maxBatch_;
  AlignedVector<float> x_;
  std::vector<std::int32_t> y_, pred_;
  IndexList order_;
  AlignedVector<float> gradAcc_;
  ExactSum shardSum_;  // data-parallel: the batch's shard gradients and loss, summed across ranks
  std::int64_t samplesTrained_ = 0;
  OptimizerState freshState_;           // the moments of runs without a persistent state
  std::vector<ParamSegment> segments_;  // the parameter tensors the optimizer updates in this run
  std::unique_ptr<Augmenter> augmenter_;
  std::uint64_t augmentSeed_ = 0;
  PrivateSgd* private_ = nullptr;        // DP-SGD settings of the client being trained (nullptr: off)
  int flipClasses_ = 0;                  // label_flip: the class count C of c -> C - 1 - c (0: off)
  IndexList privateBatch_;               // DP-SGD: the step's Poisson sample
  AlignedVector<float> privateSum_;      // DP-SGD: the clipped sum over chunks of a large Poisson batch

  // The model's tensors inside the hook's trainable range, into segments_; returns the model's tensor count.
  std::size_t collectSegments(const Model& model, const GradientHook* hook);
  // Requests the epoch's next batch (order_[next, next + batch), if next < n) into the cache while the
  // current one trains: the next gather then finds its samples there instead of in memory.
  void prefetchNextBatch(std::size_t next, std::size_t n, int batch) const;
  // Gathers training samples idx[0..count) into x_ and augments them (when set): sample j is the run's
  // sample number position0 + j, with the run's augmentation key `runKey`.
  const float* gatherTraining(const Index* idx, int count, int client, int round, std::uint64_t runKey,
                              std::int64_t position0);

  // The batch gradient (into model.grads()) and mean loss of the `count` samples at idx, computed
  // data-parallel; `shard0` numbers the batch's first shard for the dropout key.
  double dataParallelGradient(Model& model, const Index* idx, int count, const DataParallel& dp, int client, int round,
                              std::int64_t shard0, std::uint64_t runKey, std::int64_t position0);
  // DP-SGD's gradient for one step (into model.grads()) over a Poisson sample of `indices`; returns
  // the sample's mean loss (0 for an empty sample). fl/dp_sgd.cpp.
  double privateGradient(Model& model, const IndexList& indices, const TrainOptions& opt);
};

// PLayer-FL's federation sensitivity of every layer block, on one batch drawn with replacement
// (size `batch`) from `indices` with Rng(seed, client, round, Sensitivity): per weight tensor
// mean((theta * grad)^2), averaged over the block's tensors (biases only when includeBias).
std::vector<double> layerSensitivity(Model& model, LocalTrainer& trainer, const IndexList& indices, int batch,
                                     std::uint64_t seed, int client, int round, bool includeBias);

}  // namespace fedsilo
