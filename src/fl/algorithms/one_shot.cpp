#include "fl/algorithms/one_shot.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/types.hpp"
#include "fl/gradient_hooks.hpp"

namespace fedsilo {

// ---- options -------------------------------------------------------------------------------------

std::vector<OptionSpec> oneShotOptionSpecs() {
  return {
      {"gems.local_epochs", "40",
       "one-shot algorithms: epochs of local training to convergence (train.batch, train.lr)"},
      {"gems.init", "shared",
       "one-shot algorithms: shared (every local model starts from the experiment's initial model) | independent "
       "(client k starts from its own draw, keyed by seed and k, as in the GEMS authors' code)"},
      {"gems.epsilon", "0.4", "GEMS: good-enough threshold, Q(w) = 1 iff validation accuracy >= epsilon"},
      {"gems.r_max", "4000", "GEMS: radius search interval [0, r_max]"},
      {"gems.tol", "0.01", "GEMS: radius search stops when hi - lo <= tol"},
      {"gems.samples", "500", "GEMS: surface points that must all pass per candidate radius"},
      {"gems.shape", "sphere", "GEMS: sphere | ellipsoid (axes from the diagonal Fisher, App. A)"},
      {"gems.fisher_samples", "200", "GEMS: validation samples of the diagonal Fisher estimate"},
      {"gems.fisher_prop", "1", "GEMS: perturb only the top fraction of parameters by Fisher value, in (0, 1]"},
      {"gems.mode", "auto", "GEMS: auto | convex | neuron (auto: neuron for an mlp with one hidden layer)"},
      {"gems.neuron_epsilon", "1", "GEMS neuron: ||activation change||_2 / N_val <= neuron_epsilon"},
      {"gems.neuron_tol", "1", "GEMS neuron: radius search tolerance for hidden neurons"},
      {"gems.clusters", "75", "GEMS neuron: k-means clusters over all K*L hidden neurons"},
      {"gems.kmeans_iters", "100", "GEMS neuron: maximum Lloyd iterations"},
      {"gems.head_epochs", "10", "GEMS neuron: epochs of head retraining on the GEMS hidden features"},
      {"gems.intersect_lr", "0.01", "GEMS: step size of the subgradient descent for eq (2)"},
      {"gems.intersect_steps", "10000", "GEMS: maximum subgradient steps for eq (2)"},
      {"gems.public_samples", "0", "one-shot: public samples the final model is fine-tuned on (0: none)"},
      {"gems.finetune_epochs", "5", "one-shot: epochs of public-data fine-tuning of the last layer"},
      {"gems.finetune_lr", "0", "one-shot: fine-tuning learning rate (0: train.lr)"},
      {"gems.finetune_optimizer", "train",
       "one-shot: fine-tuning optimizer: train (as train.optimizer) | sgd | adam | adamw, with the train.* "
       "settings (betas, eps, amsgrad, weight decay); its moments start fresh for each fine-tuning"},
      {"gems.finetune_sizes", "0", "one-shot: public-sample sizes of the recorded fine-tuning sweep (e.g. 0,100,1000)"},
      {"gems.public_epochs", "0", "public_only: epochs on the public sample (0: gems.finetune_epochs)"},
      {"gems.global_shard", "16",
       "global: samples per gradient shard of its data-parallel SGD (shard s of a batch on rank s % ranks; "
       "fixed, so results do not depend on the rank count); 0 = train on rank 0 alone (serial)"},
  };
}

template <>
const std::vector<EnumName<LocalInit>>& enumNames<LocalInit>() {
  static const std::vector<EnumName<LocalInit>> names = {{LocalInit::Shared, "shared"}, {LocalInit::Independent, "independent"}};
  return names;
}

template <>
const std::vector<EnumName<BallShape>>& enumNames<BallShape>() {
  static const std::vector<EnumName<BallShape>> names = {{BallShape::Sphere, "sphere"}, {BallShape::Ellipsoid, "ellipsoid"}};
  return names;
}

template <>
const std::vector<EnumName<GemsMode>>& enumNames<GemsMode>() {
  static const std::vector<EnumName<GemsMode>> names = {{GemsMode::Auto, "auto"}, {GemsMode::Convex, "convex"}, {GemsMode::Neuron, "neuron"}};
  return names;
}

OneShotOptions OneShotOptions::parse(const ExperimentConfig& cfg) {
  const OptionValues& v = cfg.algo;
  OneShotOptions o;
  o.localEpochs = static_cast<int>(v.getInt("gems.local_epochs", 0, 1000000));
  o.init = parseEnum<LocalInit>("gems.init", v.getString("gems.init"));
  o.epsilon = v.getDouble("gems.epsilon", 0.0, 1.0);
  o.rMax = v.getDouble("gems.r_max", 1e-12, 1e12);
  o.tol = v.getDouble("gems.tol", 1e-12, 1e12);
  o.samples = static_cast<int>(v.getInt("gems.samples", 1, 100000000));
  o.shape = parseEnum<BallShape>("gems.shape", v.getString("gems.shape"));
  o.fisherSamples = static_cast<int>(v.getInt("gems.fisher_samples", 1, 100000000));
  o.fisherProp = v.getDouble("gems.fisher_prop", 1e-12, 1.0);
  o.mode = parseEnum<GemsMode>("gems.mode", v.getString("gems.mode"));
  o.neuronEpsilon = v.getDouble("gems.neuron_epsilon", 0.0, 1e12);
  o.neuronTol = v.getDouble("gems.neuron_tol", 1e-12, 1e12);
  o.clusters = static_cast<int>(v.getInt("gems.clusters", 1, 100000000));
  o.kmeansIters = static_cast<int>(v.getInt("gems.kmeans_iters", 1, 100000000));
  o.headEpochs = static_cast<int>(v.getInt("gems.head_epochs", 0, 1000000));
  o.intersectLr = v.getDouble("gems.intersect_lr", 1e-300, 1e12);
  o.intersectSteps = static_cast<int>(v.getInt("gems.intersect_steps", 0, 1000000000));
  o.publicSamples = static_cast<int>(v.getInt("gems.public_samples", 0, 1000000000));
  o.finetuneEpochs = static_cast<int>(v.getInt("gems.finetune_epochs", 0, 1000000));
  o.finetuneLr = v.getDouble("gems.finetune_lr", 0.0, 1e6);
  const std::string finetuneOptimizer = v.getString("gems.finetune_optimizer");
  if (finetuneOptimizer != "train") {
    o.finetuneOptimizer = findEnum<OptimizerKind>(finetuneOptimizer);
    if (!o.finetuneOptimizer)
      throw ConfigError(fmt("gems.finetune_optimizer = ", finetuneOptimizer, ": expected train or one of ",
                            joinNames<OptimizerKind>(", ")));
  }
  o.finetuneSizes = v.getIntList("gems.finetune_sizes", 0, 1000000000);
  o.publicEpochs = static_cast<int>(v.getInt("gems.public_epochs", 0, 1000000));
  if (o.finetuneSizes.empty())
    throw ConfigError("gems.finetune_sizes = '': expected at least one public-sample size (e.g. 0,100,1000)");
  return o;
}

void requireOneShotConfig(const ExperimentConfig& cfg, const std::string& name, int rounds) {
  if (cfg.rounds != rounds)
    throw ConfigError(fmt("rounds = ", cfg.rounds, ": algorithm = ", name, " is one-shot here and needs rounds = ",
                          rounds, rounds == 2 ? " (round 0: hidden layer, round 1: heads)" : "",
                          "; leave rounds unset to run it"));
  if (cfg.fl.clientsPerRound != 0 && cfg.fl.clientsPerRound < cfg.clients)
    throw ConfigError(fmt("fl.clients_per_round = ", cfg.fl.clientsPerRound, ": algorithm = ", name,
                          " uses every client once (set 0)"));
  if (cfg.fl.dropout != 0.0)
    throw ConfigError(fmt("fl.dropout = ", cfg.fl.dropout, ": algorithm = ", name, " needs every client (set 0)"));
}

// ---- evaluation helpers ---------------------------------------------------------------------------

IndexList allIndices(Index n) {
  IndexList idx(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) idx[static_cast<std::size_t>(i)] = i;
  return idx;
}

std::vector<std::int32_t> predictLabels(Model& model, LocalTrainer& trainer, const Dataset& data, const IndexList& idx,
                                        int batch) {
  std::vector<std::int32_t> pred(idx.size());
  const int bs = std::min(batch, model.maxBatch());
  for (std::size_t b = 0; b < idx.size(); b += static_cast<std::size_t>(bs)) {
    const int cnt = static_cast<int>(std::min<std::size_t>(bs, idx.size() - b));
    const float* x = trainer.gatherBatch(data, idx.data() + b, cnt);
    const std::int32_t* y = trainer.gatherLabels(data, idx.data() + b, cnt);
    model.evaluate(x, y, cnt, pred.data() + b);
  }
  return pred;
}

std::vector<std::int32_t> majorityVote(const std::vector<std::vector<std::int32_t>>& votes, int numClasses, Rng& tie) {
  FEDSILO_ASSERT(!votes.empty());
  const std::size_t n = votes[0].size();
  std::vector<std::int32_t> out(n);
  std::vector<int> count(static_cast<std::size_t>(numClasses));
  std::vector<std::int32_t> best;
  for (std::size_t i = 0; i < n; ++i) {
    std::fill(count.begin(), count.end(), 0);
    for (const auto& v : votes) ++count[static_cast<std::size_t>(v[i])];
    const int top = *std::max_element(count.begin(), count.end());
    best.clear();
    for (int c = 0; c < numClasses; ++c)
      if (count[c] == top) best.push_back(c);
    out[i] = best.size() == 1 ? best[0] : best[tie.below(best.size())];
  }
  return out;
}

double accuracyOf(const std::vector<std::int32_t>& pred, const Dataset& data, const IndexList& idx) {
  if (idx.empty()) return kNaN;
  Index ok = 0;
  for (std::size_t i = 0; i < idx.size(); ++i) ok += pred[i] == data.labels[static_cast<std::size_t>(idx[i])] ? 1 : 0;
  return static_cast<double>(ok) / static_cast<double>(idx.size());
}

// ---- OneShot ------------------------------------------------------------------------------------

OneShot::OneShot(const ExperimentConfig& cfg, std::string name, int rounds)
    : name_(std::move(name)), opt_(OneShotOptions::parse(cfg)) {
  requireOneShotConfig(cfg, name_, rounds);
}

void OneShot::setup(const FlContext& ctx, std::vector<float>& global) {
  init_ = global;
  publicPool_.clear();
  for (const ClientData& c : ctx.clients) publicPool_.insert(publicPool_.end(), c.val.begin(), c.val.end());
  Rng rng(ctx.cfg.seed, -1, -1, Purpose::Public);
  rng.shuffle(publicPool_);
  const auto pool = static_cast<long long>(publicPool_.size());
  for (int s : opt_.finetuneSizes)
    if (s > pool)
      throw ConfigError(fmt("gems.finetune_sizes = ", ctx.cfg.algo.getString("gems.finetune_sizes"), ": size ", s,
                            " exceeds the pooled validation data of all clients (", pool, " samples; see data.split)"));
  if (opt_.publicSamples > pool)
    throw ConfigError(fmt("gems.public_samples = ", opt_.publicSamples,
                          ": exceeds the pooled validation data of all clients (", pool, " samples; see data.split)"));
  const std::vector<LayerBlock>& blocks = ctx.blocks;
  FEDSILO_ASSERT(!blocks.empty());
  if (blocks.back().offset + blocks.back().size != ctx.numParams)
    throw ConfigError(
        fmt("model = ", ctx.cfg.model.name, ": one-shot fine-tuning needs the last layer to be a parameter block"));
}

std::vector<char> OneShot::reducedBlocks(const FlContext& ctx, int) const {
  return std::vector<char>(ctx.blocks.size(), 0);
}

OneShot::Workbench OneShot::makeBench(const FlContext& ctx, const ModelConfig& mcfg) {
  Workbench b;
  const int maxBatch = std::max(ctx.cfg.train.batch, ctx.cfg.eval.batch);
  b.model = buildModel<float>(mcfg, ctx.input);
  b.model->reserve(maxBatch);
  b.trainer = std::make_unique<LocalTrainer>(ctx.data.train, maxBatch);
  return b;
}

OneShot::Workbench& OneShot::bench(const FlContext& ctx) const {
  if (!bench_.model) bench_ = makeBench(ctx, ctx.cfg.model);
  return bench_;
}

TrainOptions OneShot::localTrainOptions(const ExperimentConfig& cfg) const {
  TrainOptions t = TrainOptions::from(cfg.train);
  t.epochs = opt_.localEpochs;
  return t;
}

void OneShot::startLocal(ClientContext& c) const {
  if (opt_.init == LocalInit::Independent) {
    Rng init(c.fl.cfg.seed, c.client.id, -1, Purpose::Init);
    c.model.initialize(init);
  } else {
    c.model.setParams(init_);
  }
}

double OneShot::trainLocal(ClientContext& c) {
  startLocal(c);
  Rng rng = c.shuffleRng();
  const TrainStats st =
      c.trainer.train(c.model, c.client.train, localTrainOptions(c.fl.cfg), rng, c.client.id, c.round);
  if (keepLocal_) local_.put(c.client.id, c.model.params(), static_cast<std::size_t>(c.model.numParams()));
  return st.meanLoss;
}

IndexList OneShot::publicSample(int S) const {
  FEDSILO_ASSERT(S >= 0 && static_cast<std::size_t>(S) <= publicPool_.size());
  return IndexList(publicPool_.begin(), publicPool_.begin() + S);
}

void OneShot::fineTuneLastBlock(const FlContext& ctx, Model& model, LocalTrainer& trainer,
                                const IndexList& sample) const {
  if (sample.empty() || opt_.finetuneEpochs == 0) return;
  const ExperimentConfig& cfg = ctx.cfg;
  TrainOptions t = TrainOptions::from(cfg.train);
  t.epochs = opt_.finetuneEpochs;
  if (opt_.finetuneLr > 0.0) t.optimizer.lr = opt_.finetuneLr;
  if (opt_.finetuneOptimizer) t.optimizer.optimizer = *opt_.finetuneOptimizer;
  // Every parameter before the last block is frozen exactly.
  const auto frozen = static_cast<std::size_t>(model.blocks().back().offset);
  const GradientHook freeze =
      freezeOutsideHook(frozen, static_cast<std::size_t>(model.numParams()), t.optimizer.weightDecay);
  Rng rng(cfg.seed, -1, -1, Purpose::Shuffle, static_cast<std::uint64_t>(sample.size()));
  model.setRandomContext(cfg.seed, -1, 1000000 + static_cast<std::int64_t>(sample.size()));
  trainer.train(model, sample, t, rng, -1, 0, frozen > 0 ? &freeze : nullptr);
}

double OneShot::testAccuracy(const FlContext& ctx, Model& model, LocalTrainer& trainer) const {
  if (ctx.data.test.size() == 0) return kNaN;
  return trainer.evaluate(model, ctx.data.test, allIndices(ctx.data.test.size()), ctx.cfg.eval.batch).accuracy();
}

std::vector<float> OneShot::sweep(const FlContext& ctx, Model& model, LocalTrainer& trainer,
                                  const std::vector<float>& params) {
  FEDSILO_ASSERT(static_cast<Index>(params.size()) == model.numParams());
  auto load = [&] { model.setParams(params); };
  sweepAcc_.clear();
  for (int S : opt_.finetuneSizes) {
    load();
    fineTuneLastBlock(ctx, model, trainer, publicSample(S));
    sweepAcc_.push_back(testAccuracy(ctx, model, trainer));
  }
  load();
  accBefore_ = testAccuracy(ctx, model, trainer);
  if (opt_.publicSamples == 0) {
    accAfter_ = kNaN;
    return params;
  }
  fineTuneLastBlock(ctx, model, trainer, publicSample(opt_.publicSamples));
  accAfter_ = testAccuracy(ctx, model, trainer);
  return std::vector<float>(model.params(), model.params() + model.numParams());
}

double OneShot::clientAccuracy(ClientContext& c) {
  c.model.setParams(c.global);
  return c.testAccuracy(c.model, c.trainer);
}

void OneShot::finishClient(ClientContext& c) { clientAcc_[c.client.id] = clientAccuracy(c); }

void OneShot::requireAllClients(std::size_t received, const FlContext& ctx) const {
  if (received != ctx.clients.size())
    throw RuntimeError(
        fmt("algorithm = ", name_, ": ", received, " of ", ctx.clients.size(),
            " clients sent their update (a diverged client was dropped?); one-shot aggregation needs all"));
}

std::vector<double> OneShot::serverState() const {
  StatePacker p;
  p.doubles(sweepAcc_);
  p.scalar(accBefore_);
  p.scalar(accAfter_);
  packExtra(p);
  return p.take();
}

void OneShot::setServerState(const std::vector<double>& state) {
  if (state.empty()) return;
  StateReader r(state);
  sweepAcc_ = r.doubles();
  accBefore_ = r.scalar();
  accAfter_ = r.scalar();
  unpackExtra(r);
  FEDSILO_ASSERT(r.done(), "server state of ", name_, " has trailing values");
}

void OneShot::record(const FlContext& ctx, RecordSink& sink) const {
  const auto S = static_cast<std::uint64_t>(opt_.finetuneSizes.size());
  std::vector<std::int64_t> sizes(opt_.finetuneSizes.begin(), opt_.finetuneSizes.end());
  std::vector<double> acc = sweepAcc_;
  if (acc.size() != S) acc.assign(S, kNaN);
  sink.writeIntArray("/gems/finetune/samples", sizes, {S});
  sink.writeArray("/gems/finetune/accuracy", acc, {S});
  sink.writeScalar("/gems/accuracy_before", accBefore_);
  sink.writeScalar("/gems/accuracy_after", accAfter_);
  std::vector<double> rows;
  for (int k : ctx.placement.clients(ctx.rank)) {
    auto it = clientAcc_.find(k);
    rows.push_back(it == clientAcc_.end() ? kNaN : it->second);
  }
  sink.writeClientRows("/gems/client_accuracy", rows, 1);
  recordExtra(ctx, sink);
}

}  // namespace fedsilo
