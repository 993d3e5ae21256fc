#include "fl/local_trainer.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/types.hpp"
#include "robust/attack.hpp"

namespace fedsilo {

void EvalStats::count(std::int32_t predicted, std::int32_t label) {
  ++n;
  labelCount[static_cast<std::size_t>(label)]++;
  predCount[static_cast<std::size_t>(predicted)]++;
  if (predicted == label) {
    ++correct;
    truePos[static_cast<std::size_t>(label)]++;
  }
}

EvalStats predictionStats(const std::vector<std::int32_t>& pred, const Dataset& data, const IndexList& idx) {
  FEDSILO_ASSERT(pred.size() == idx.size());
  EvalStats st(data.numClasses);
  st.lossSum = kNaN;
  for (std::size_t i = 0; i < idx.size(); ++i) st.count(pred[i], data.labels[static_cast<std::size_t>(idx[i])]);
  return st;
}

double EvalStats::accuracy() const {
  return n > 0 ? static_cast<double>(correct) / static_cast<double>(n) : kNaN;
}

double EvalStats::meanLoss() const {
  return n > 0 ? lossSum / static_cast<double>(n) : kNaN;
}

double EvalStats::macroF1() const {
  if (n == 0) return kNaN;
  double sum = 0.0;
  int classes = 0;
  for (std::size_t c = 0; c < truePos.size(); ++c) {
    if (labelCount[c] == 0 && predCount[c] == 0) continue;
    ++classes;
    const double denom = static_cast<double>(labelCount[c] + predCount[c]);
    sum += denom > 0 ? 2.0 * static_cast<double>(truePos[c]) / denom : 0.0;
  }
  return classes > 0 ? sum / classes : kNaN;
}

TrainOptions TrainOptions::from(const TrainConfig& t) {
  TrainOptions o;
  o.epochs = t.epochs;
  o.batch = t.batch;
  o.optimizer = t;  // the OptimizerSettings part of train.*
  return o;
}

Index stepsPerEpoch(Index samples, int batch) {
  FEDSILO_ASSERT(samples >= 0 && batch > 0, "steps per epoch of ", samples, " samples in batches of ", batch);
  return (samples + batch - 1) / batch;
}

int epochsForSteps(Index samples, int batch, Index steps) {
  const Index perEpoch = stepsPerEpoch(samples, batch);
  if (perEpoch == 0 || steps <= 0) return 1;
  return static_cast<int>((steps + perEpoch - 1) / perEpoch);
}

Index samplesOfSteps(Index samples, int batch, Index steps) {
  const Index perEpoch = stepsPerEpoch(samples, batch);
  if (perEpoch == 0 || steps <= 0) return 0;
  return (steps / perEpoch) * samples + std::min<Index>((steps % perEpoch) * batch, samples);
}

LocalTrainer::LocalTrainer(const Dataset& train, int maxBatch) : train_(train), maxBatch_(maxBatch) {
  FEDSILO_ASSERT(maxBatch > 0);
  x_.assign(static_cast<std::size_t>(train.dim()) * maxBatch, 0.0f);
  y_.assign(maxBatch, 0);
  pred_.assign(maxBatch, 0);
}

const float* LocalTrainer::gatherBatch(const Dataset& data, const Index* idx, int count) {
  FEDSILO_ASSERT(count <= maxBatch_ && data.dim() == train_.dim());
  data.gather(idx, count, x_.data());
  return x_.data();
}

void LocalTrainer::setAugmenter(std::unique_ptr<Augmenter> augmenter, std::uint64_t seed) {
  augmenter_ = std::move(augmenter);
  augmentSeed_ = seed;
}

const float* LocalTrainer::gatherTraining(const Index* idx, int count, int client, int round, std::uint64_t runKey,
                                          std::int64_t position0) {
  FEDSILO_ASSERT(count <= maxBatch_);
  float* x = x_.data();
  train_.gather(idx, count, x);
  if (!augmenter_) return x;
  const std::size_t dim = static_cast<std::size_t>(train_.dim());
  for (int j = 0; j < count; ++j) {
    Rng rng(augmentSeed_, client, round, Purpose::Augment, mix64(runKey ^ static_cast<std::uint64_t>(position0 + j)));
    augmenter_->apply(augmenter_->draw(rng), x + static_cast<std::size_t>(j) * dim);
  }
  return x;
}

std::size_t LocalTrainer::collectSegments(const Model& model, const GradientHook* hook) {
  const std::size_t begin = hook ? hook->trainBegin : 0;
  const std::size_t end = hook ? hook->trainEnd : static_cast<std::size_t>(model.numParams());
  segments_.clear();
  std::size_t tensor = 0;
  for (const LayerBlock& block : model.blocks())
    for (const ParamTensor& t : block.tensors) {
      const std::size_t lo = std::max(begin, static_cast<std::size_t>(t.offset));
      const std::size_t hi = std::min(end, static_cast<std::size_t>(t.offset + t.size));
      if (lo < hi) segments_.push_back(ParamSegment{lo, hi, tensor});
      ++tensor;
    }
  return tensor;
}

void LocalTrainer::prefetchNextBatch(std::size_t next, std::size_t n, int batch) const {
  if (next < n) train_.prefetch(order_.data() + next, static_cast<int>(std::min<std::size_t>(batch, n - next)));
}

const std::int32_t* LocalTrainer::gatherLabels(const Dataset& data, const Index* idx, int count) {
  for (int i = 0; i < count; ++i) y_[i] = data.labels[static_cast<std::size_t>(idx[i])];
  if (flipClasses_ > 0)
    for (int i = 0; i < count; ++i) y_[i] = flipLabel(y_[i], flipClasses_);
  return y_.data();
}

double LocalTrainer::dataParallelGradient(Model& model, const Index* idx, int count, const DataParallel& dp, int client,
                                          int round, std::int64_t shard0, std::uint64_t runKey,
                                          std::int64_t position0) {
  const std::size_t P = static_cast<std::size_t>(model.numParams());
  if (shardSum_.size() != P + 1) shardSum_.resize(P + 1);
  shardSum_.clear();
  const int m = std::max(dp.shardSamples, 1);
  for (int off = 0, s = 0; off < count; off += m, ++s) {
    if (s % dp.ranks != dp.rank) continue;
    const int cnt = std::min(m, count - off);
    // Dropout masks of shard s: the same whichever rank computes it.
    model.setRandomContext(dp.seed, client, (static_cast<std::int64_t>(round) << 32) + shard0 + s);
    const float* x = gatherTraining(idx + off, cnt, client, round, runKey, position0 + off);
    const std::int32_t* y = gatherLabels(train_, idx + off, cnt);
    const double w = static_cast<double>(cnt) / static_cast<double>(count);
    const double loss = model.lossAndGradient(x, y, cnt);  // mean over the shard
    shardSum_.addScaled(0, model.grads(), P, w);
    shardSum_.add(P, loss * w);
  }
  dp.allreduceExact(shardSum_);
  float* g = model.grads();
  for (std::size_t i = 0; i < P; ++i) g[i] = static_cast<float>(shardSum_.value(i));
  return shardSum_.value(P);
}

TrainStats LocalTrainer::train(Model& model, const IndexList& indices, const TrainOptions& opt, Rng& shuffle,
                               int client, int round, const GradientHook* hook, const DataParallel* dp) {
  TrainStats st;
  if (indices.empty() || opt.epochs <= 0) return st;
  const Optimizer optimizer(opt.optimizer);
  OptimizerState& state = opt.state ? *opt.state : freshState_;
  const std::size_t tensors = collectSegments(model, hook);
  optimizer.prepare(state, static_cast<std::size_t>(model.numParams()), tensors);
  if (!opt.state) state.clear();
  // The run's augmentation key: drawn only when augmenting, so that runs without augmentation see the
  // same shuffles as before.
  const std::uint64_t runKey = augmenter_ ? shuffle.next() : 0;
  order_.assign(indices.begin(), indices.end());
  const std::size_t n = order_.size();
  // A batch larger than the data is the whole set: the buffers need only min(batch, n) (data-parallel:
  // one shard at a time).
  const int largest = dp ? std::min(opt.batch, std::max(dp->shardSamples, 1))
                         : static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(opt.batch), n));
  FEDSILO_ASSERT(largest <= maxBatch_ && largest <= model.maxBatch(), "batch ", largest, " exceeds the buffers' ",
                 std::min(maxBatch_, model.maxBatch()));
  const std::size_t P = static_cast<std::size_t>(model.numParams());
  double lossSum = 0.0;
  std::int64_t shards = 0;  // data-parallel: shards so far (the dropout key)
  // Plain SGD (no momentum, weight decay, hook, data parallelism or DP-SGD) runs as one Model::sgdStep:
  // the update is fused into the Dense weight-gradient kernel, with the same rounding as the optimizer's
  // plain SGD step. Without a hook every tensor trains, so the optimizer's segments are the whole model.
  const OptimizerSettings& settings = opt.optimizer;
  const bool fusedSgd = settings.optimizer == OptimizerKind::Sgd && !dp && !private_ && !hook && settings.momentum == 0.0 &&
                        settings.weightDecay == 0.0;
  for (int e = 0; e < opt.epochs; ++e) {
    // A fresh permutation of the client's samples each epoch, restarting from the sorted list so
    // that the permutation depends only on (seed, client, round, epoch draws), not on history.
    std::copy(indices.begin(), indices.end(), order_.begin());
    shuffle.shuffle(order_);
    for (std::size_t b = 0; b < n; b += static_cast<std::size_t>(opt.batch)) {
      const int cnt = static_cast<int>(std::min<std::size_t>(opt.batch, n - b));
      const std::int64_t position = static_cast<std::int64_t>(static_cast<std::size_t>(e) * n + b);
      double loss;
      if (dp) {
        loss = dataParallelGradient(model, order_.data() + b, cnt, *dp, client, round, shards, runKey, position);
        shards += (cnt + std::max(dp->shardSamples, 1) - 1) / std::max(dp->shardSamples, 1);
      } else if (private_) {
        loss = privateGradient(model, indices, opt);  // DP-SGD: a Poisson batch instead of this slice
      } else {
        const float* x = gatherTraining(order_.data() + b, cnt, client, round, runKey, position);
        const std::int32_t* y = gatherLabels(train_, order_.data() + b, cnt);
        prefetchNextBatch(b + static_cast<std::size_t>(cnt), n, opt.batch);
        loss = fusedSgd ? model.sgdStep(x, y, cnt, static_cast<float>(settings.lr)) : model.lossAndGradient(x, y, cnt);
      }
      // With dp the loss is the reduced one, the same on every rank: all ranks throw together.
      if (!std::isfinite(loss))
        throw NumericError(fmt("client ", client, " round ", round, ": training loss became ", loss, " at step ",
                               st.steps, " (lr = ", settings.lr, "; try a smaller train.lr)"));
      if (!fusedSgd) {
        if (hook) (*hook)(model.params(), model.grads(), P);
        optimizer.step(model.params(), model.grads(), segments_, state);
      }
      lossSum += loss;
      ++st.steps;
      st.samples += cnt;
      samplesTrained_ += cnt;
      if (opt.maxSteps > 0 && st.steps >= opt.maxSteps) {
        st.meanLoss = lossSum / static_cast<double>(st.steps);
        return st;
      }
    }
  }
  st.meanLoss = lossSum / static_cast<double>(std::max<Index>(st.steps, 1));
  return st;
}

double LocalTrainer::meanLossAndGradient(Model& model, const IndexList& indices, std::vector<float>& gradOut) {
  const std::size_t P = static_cast<std::size_t>(model.numParams());
  gradAcc_.assign(P, 0.0f);
  double lossSum = 0.0;
  const std::size_t n = indices.size();
  if (n == 0) {
    gradOut.assign(P, 0.0f);
    return 0.0;
  }
  for (std::size_t b = 0; b < n; b += static_cast<std::size_t>(maxBatch_)) {
    const int cnt = static_cast<int>(std::min<std::size_t>(maxBatch_, n - b));
    if (cnt > model.maxBatch()) model.reserve(cnt);
    const float* x = gatherBatch(train_, indices.data() + b, cnt);
    const std::int32_t* y = gatherLabels(train_, indices.data() + b, cnt);
    const double l = model.lossAndGradient(x, y, cnt);  // mean over the batch
    lossSum += l * cnt;
    const float w = static_cast<float>(cnt) / static_cast<float>(n);
    const float* g = model.grads();
    for (std::size_t i = 0; i < P; ++i) gradAcc_[i] += w * g[i];
  }
  gradOut.assign(gradAcc_.begin(), gradAcc_.end());
  return lossSum / static_cast<double>(n);
}

EvalStats LocalTrainer::evaluate(Model& model, const Dataset& data, const IndexList& indices, int evalBatch) {
  EvalStats st(model.numClasses());
  const int bs = std::min(evalBatch, maxBatch_);
  const std::size_t n = indices.size();
  for (std::size_t b = 0; b < n; b += static_cast<std::size_t>(bs)) {
    const int cnt = static_cast<int>(std::min<std::size_t>(bs, n - b));
    const float* x = gatherBatch(data, indices.data() + b, cnt);
    const std::int32_t* y = gatherLabels(data, indices.data() + b, cnt);
    st.lossSum += model.evaluate(x, y, cnt, pred_.data());
    for (int i = 0; i < cnt; ++i) st.count(pred_[i], y[i]);
  }
  return st;
}

std::vector<double> layerSensitivity(Model& model, LocalTrainer& trainer, const IndexList& indices, int batch,
                                     std::uint64_t seed, int client, int round, bool includeBias) {
  const auto& blocks = model.blocks();
  std::vector<double> s(blocks.size(), kNaN);
  if (indices.empty()) return s;
  Rng rng(seed, client, round, Purpose::Sensitivity);
  // One batch of the client's: at most its training set's size (as in training), whatever the buffers.
  const int cnt = std::min({batch, static_cast<int>(indices.size()), model.maxBatch()});
  IndexList pick(static_cast<std::size_t>(cnt));
  for (auto& p : pick) p = indices[rng.below(indices.size())];
  const float* x = trainer.gatherBatch(trainer.trainSet(), pick.data(), cnt);
  const std::int32_t* y = trainer.gatherLabels(trainer.trainSet(), pick.data(), cnt);
  model.lossAndGradient(x, y, cnt);
  const float* th = model.params();
  const float* g = model.grads();
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    double sum = 0.0;
    int tensors = 0;
    for (const auto& t : blocks[b].tensors) {
      if (t.isBias && !includeBias) continue;
      double acc = 0.0;
      for (Index i = t.offset; i < t.offset + t.size; ++i) {
        const double v = static_cast<double>(th[i]) * static_cast<double>(g[i]);
        acc += v * v;
      }
      sum += acc / static_cast<double>(t.size);
      ++tensors;
    }
    s[b] = tensors > 0 ? sum / tensors : kNaN;
  }
  return s;
}

}  // namespace fedsilo
