#include "fl/oneshot.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fedsilo {

// ---- options -------------------------------------------------------------------------------------

std::vector<OptionSpec> gemsOptionSpecs() {
  return {
      {"gems.local_epochs", "40", "one-shot algorithms: epochs of local training to convergence (train.batch, train.lr)"},
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
      {"gems.finetune_sizes", "0", "one-shot: public-sample sizes of the recorded fine-tuning sweep (e.g. 0,100,1000)"},
      {"gems.public_epochs", "0", "public_only: epochs on the public sample (0: gems.finetune_epochs)"},
      {"gems.global_shard", "16",
       "global: samples per gradient shard of its data-parallel SGD (shard s of a batch on rank s % ranks; "
       "fixed, so results do not depend on the rank count); 0 = train on rank 0 alone (serial)"},
  };
}

namespace {
void oneOfOption(const ExperimentConfig& cfg, const std::string& key, const std::vector<std::string>& allowed,
                 std::string& out) {
  out = trim(cfg.algo.getString(key));
  for (const auto& a : allowed)
    if (out == a) return;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw ConfigError(fmt(key, " = ", cfg.algo.getString(key), ": expected one of ", list));
}
}  // namespace

GemsOptions GemsOptions::parse(const ExperimentConfig& cfg) {
  const OptionValues& v = cfg.algo;
  GemsOptions o;
  o.localEpochs = static_cast<int>(v.getInt("gems.local_epochs", 0, 1000000));
  oneOfOption(cfg, "gems.init", {"shared", "independent"}, o.init);
  o.epsilon = v.getDouble("gems.epsilon", 0.0, 1.0);
  o.rMax = v.getDouble("gems.r_max", 1e-12, 1e12);
  o.tol = v.getDouble("gems.tol", 1e-12, 1e12);
  o.samples = static_cast<int>(v.getInt("gems.samples", 1, 100000000));
  oneOfOption(cfg, "gems.shape", {"sphere", "ellipsoid"}, o.shape);
  o.fisherSamples = static_cast<int>(v.getInt("gems.fisher_samples", 1, 100000000));
  o.fisherProp = v.getDouble("gems.fisher_prop", 1e-12, 1.0);
  oneOfOption(cfg, "gems.mode", {"auto", "convex", "neuron"}, o.mode);
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
  o.finetuneSizes = v.getIntList("gems.finetune_sizes", 0, 1000000000);
  o.publicEpochs = static_cast<int>(v.getInt("gems.public_epochs", 0, 1000000));
  if (o.finetuneSizes.empty())
    throw ConfigError("gems.finetune_sizes = '': expected at least one public-sample size (e.g. 0,100,1000)");
  return o;
}

void requireOneShotConfig(const ExperimentConfig& cfg, const std::string& name, int rounds) {
  if (cfg.rounds != rounds)
    throw ConfigError(fmt("rounds = ", cfg.rounds, ": algorithm = ", name, " is one-shot here and needs rounds = ",
                          rounds, rounds == 2 ? " (round 0: hidden layer, round 1: heads)" : ""));
  if (cfg.fl.clientsPerRound != 0 && cfg.fl.clientsPerRound < cfg.clients)
    throw ConfigError(fmt("fl.clients_per_round = ", cfg.fl.clientsPerRound, ": algorithm = ", name,
                          " uses every client once (set 0)"));
  if (cfg.fl.dropout != 0.0)
    throw ConfigError(fmt("fl.dropout = ", cfg.fl.dropout, ": algorithm = ", name, " needs every client (set 0)"));
}

// ---- state serialisation --------------------------------------------------------------------------

void StatePacker::doubles(const std::vector<double>& v) {
  out_.push_back(static_cast<double>(v.size()));
  out_.insert(out_.end(), v.begin(), v.end());
}

void StatePacker::floats(const std::vector<float>& v) {
  out_.push_back(static_cast<double>(v.size()));
  out_.insert(out_.end(), v.begin(), v.end());
}

double StateReader::scalar() {
  FEDSILO_ASSERT(pos_ < s_.size(), "server state too short");
  return s_[pos_++];
}

std::vector<double> StateReader::doubles() {
  const auto n = static_cast<std::size_t>(scalar());
  FEDSILO_ASSERT(pos_ + n <= s_.size(), "server state too short");
  std::vector<double> v(s_.begin() + static_cast<std::ptrdiff_t>(pos_), s_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
  pos_ += n;
  return v;
}

std::vector<float> StateReader::floats() {
  const std::vector<double> d = doubles();
  return std::vector<float>(d.begin(), d.end());
}

// ---- evaluation helpers ---------------------------------------------------------------------------

namespace {
double meanOf(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x;
  return v.empty() ? std::numeric_limits<double>::quiet_NaN() : s / static_cast<double>(v.size());
}
}  // namespace

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
  if (idx.empty()) return std::numeric_limits<double>::quiet_NaN();
  Index ok = 0;
  for (std::size_t i = 0; i < idx.size(); ++i) ok += pred[i] == data.labels[static_cast<std::size_t>(idx[i])] ? 1 : 0;
  return static_cast<double>(ok) / static_cast<double>(idx.size());
}

// ---- OneShot ------------------------------------------------------------------------------------

OneShot::OneShot(const ExperimentConfig& cfg, std::string name, int rounds)
    : name_(std::move(name)), opt_(GemsOptions::parse(cfg)) {
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
    throw ConfigError(fmt("model = ", ctx.cfg.model.name, ": one-shot fine-tuning needs the last layer to be a parameter block"));
}

std::vector<char> OneShot::reducedBlocks(const FlContext& ctx, int) const {
  return std::vector<char>(ctx.blocks.size(), 0);
}

bool OneShot::evalParams(const FlContext&, int client, const std::vector<float>&, float* out) const {
  const std::vector<float>* mine = (keepLocal_ && !hasGlobalModel()) ? local_.find(client) : nullptr;
  if (!mine) return false;
  std::memcpy(out, mine->data(), mine->size() * sizeof(float));
  return true;
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
  if (opt_.init == "independent") {
    Rng init(c.fl.cfg.seed, c.client.id, -1, Purpose::Init);
    c.model.initialize(init);
  } else {
    std::memcpy(c.model.params(), init_.data(), init_.size() * sizeof(float));
  }
}

double OneShot::trainLocal(ClientContext& c) {
  startLocal(c);
  Rng rng = c.shuffleRng();
  const TrainStats st = c.trainer.train(c.model, c.client.train, localTrainOptions(c.fl.cfg), rng, c.client.id, c.round);
  if (keepLocal_) local_.put(c.client.id, c.model.params(), static_cast<std::size_t>(c.model.numParams()));
  return st.meanLoss;
}

IndexList OneShot::publicSample(int S) const {
  FEDSILO_ASSERT(S >= 0 && static_cast<std::size_t>(S) <= publicPool_.size());
  return IndexList(publicPool_.begin(), publicPool_.begin() + S);
}

void OneShot::fineTuneLastBlock(const FlContext& ctx, Model& model, LocalTrainer& trainer, const IndexList& sample) const {
  if (sample.empty() || opt_.finetuneEpochs == 0) return;
  const ExperimentConfig& cfg = ctx.cfg;
  TrainOptions t = TrainOptions::from(cfg.train);
  t.epochs = opt_.finetuneEpochs;
  if (opt_.finetuneLr > 0.0) t.lr = opt_.finetuneLr;
  // Freeze every parameter before the last block: with g_i = -wd * p_i, SGD's g_i + wd * p_i is 0,
  // so the velocity stays 0 and p_i does not move, whatever momentum and weight decay are.
  const auto frozen = static_cast<std::size_t>(model.blocks().back().offset);
  const float wd = static_cast<float>(t.weightDecay);
  GradientHook freeze = [frozen, wd](const float* p, float* g, std::size_t) {
    for (std::size_t i = 0; i < frozen; ++i) g[i] = -wd * p[i];
  };
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
  auto load = [&] { std::memcpy(model.params(), params.data(), params.size() * sizeof(float)); };
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
  std::memcpy(c.model.params(), c.global.data(), c.global.size() * sizeof(float));
  return c.trainer.evaluate(c.model, testSetOf(c.fl, c.client), c.client.test, c.fl.cfg.eval.batch).accuracy();
}

void OneShot::finishClient(ClientContext& c) { clientAcc_[c.client.id] = clientAccuracy(c); }

void OneShot::requireAllClients(std::size_t received, const FlContext& ctx) const {
  if (received != ctx.clients.size())
    throw RuntimeError(fmt("algorithm = ", name_, ": ", received, " of ", ctx.clients.size(),
                           " clients sent their update (a diverged client was dropped?); one-shot aggregation needs all"));
}

std::vector<double> OneShot::serverState() const {
  StatePacker p;
  p.scalar(roundDone_ ? 1.0 : 0.0);
  p.doubles(sweepAcc_);
  p.scalar(accBefore_);
  p.scalar(accAfter_);
  packExtra(p);
  return p.take();
}

void OneShot::setServerState(const std::vector<double>& state) {
  if (state.empty()) return;
  StateReader r(state);
  roundDone_ = r.scalar() != 0.0;
  sweepAcc_ = r.doubles();
  accBefore_ = r.scalar();
  accAfter_ = r.scalar();
  unpackExtra(r);
  FEDSILO_ASSERT(r.done(), "server state of ", name_, " has trailing values");
}

void OneShot::checkpoint(StateArchive& ar) {
  Algorithm::checkpoint(ar);
  if (keepLocal_) ar.clientFloats("oneshot_local_models", local_.all());
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
  for (int k = ctx.placement.first(ctx.rank); k < ctx.placement.end(ctx.rank); ++k) {
    auto it = clientAcc_.find(k);
    rows.push_back(it == clientAcc_.end() ? kNaN : it->second);
  }
  sink.writeClientRows("/gems/client_accuracy", rows, 1);
  recordExtra(ctx, sink);
}

// ---- average --------------------------------------------------------------------------------------

std::vector<char> OneShotAverage::reducedBlocks(const FlContext& ctx, int) const {
  return std::vector<char>(ctx.blocks.size(), 1);
}

void OneShotAverage::clientUpdate(ClientContext& c, ClientUpdate& out) {
  out.trainLoss = trainLocal(c);
  out.blockWeight.assign(c.fl.blocks.size(), 1.0);  // unweighted: the paper's naive average
  out.vector = c.model.params();
}

void OneShotAverage::serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  requireAllClients(static_cast<std::size_t>(in.blockWeightSum.empty() ? 0.0 : in.blockWeightSum[0]), ctx);
  applyWeightedMean(in, ctx.blocks, global);
  Workbench& b = bench(ctx);
  global = sweep(ctx, *b.model, *b.trainer, global);
  roundDone_ = true;
}

// ---- local ----------------------------------------------------------------------------------------

OneShotLocal::OneShotLocal(const ExperimentConfig& cfg, const std::string& name) : OneShot(cfg, name) {
  keepLocal_ = true;
}

void OneShotLocal::setup(const FlContext& ctx, std::vector<float>& global) {
  OneShot::setup(ctx, global);
  numParams_ = ctx.numParams;
}

void OneShotLocal::clientUpdate(ClientContext& c, ClientUpdate& out) {
  out.trainLoss = trainLocal(c);
  out.blockWeight.assign(c.fl.blocks.size(), 0.0);
  out.payload.assign(c.model.params(), c.model.params() + c.model.numParams());
}

void OneShotLocal::serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  requireAllClients(in.payloadClients.size(), ctx);
  Workbench& b = bench(ctx);
  const std::size_t K = in.payloadClients.size(), S = opt_.finetuneSizes.size(), P = static_cast<std::size_t>(numParams_);
  memberAcc_.assign(K * S, 0.0);
  std::vector<double> before(K), after(K);
  for (std::size_t k = 0; k < K; ++k) {
    std::vector<float> w(in.payloads.begin() + static_cast<std::ptrdiff_t>(k * P),
                         in.payloads.begin() + static_cast<std::ptrdiff_t>((k + 1) * P));
    sweep(ctx, *b.model, *b.trainer, w);
    for (std::size_t s = 0; s < S; ++s) memberAcc_[k * S + s] = sweepAcc_[s];
    before[k] = accBefore_;
    after[k] = accAfter_;
  }
  // The paper's "Local": the mean over the nodes' models.
  sweepAcc_.assign(S, 0.0);
  for (std::size_t s = 0; s < S; ++s) {
    for (std::size_t k = 0; k < K; ++k) sweepAcc_[s] += memberAcc_[k * S + s];
    sweepAcc_[s] /= static_cast<double>(K);
  }
  accBefore_ = meanOf(before);
  accAfter_ = opt_.publicSamples > 0 ? meanOf(after) : kNaN;
  (void)global;
  roundDone_ = true;
}

double OneShotLocal::clientAccuracy(ClientContext& c) {
  const std::vector<float>* mine = local_.find(c.client.id);
  if (!mine) return kNaN;
  std::memcpy(c.model.params(), mine->data(), mine->size() * sizeof(float));
  return c.trainer.evaluate(c.model, testSetOf(c.fl, c.client), c.client.test, c.fl.cfg.eval.batch).accuracy();
}

void OneShotLocal::recordExtra(const FlContext& ctx, RecordSink& sink) const {
  const auto K = static_cast<std::uint64_t>(ctx.clients.size()), S = static_cast<std::uint64_t>(opt_.finetuneSizes.size());
  std::vector<double> m = memberAcc_;
  if (m.size() != K * S) m.assign(K * S, kNaN);
  sink.writeArray("/gems/finetune/member_accuracy", m, {K, S});
}

// ---- ensemble ---------------------------------------------------------------------------------------

OneShotEnsemble::OneShotEnsemble(const ExperimentConfig& cfg) : OneShotLocal(cfg, "ensemble") {}

void OneShotEnsemble::serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  requireAllClients(in.payloadClients.size(), ctx);
  Workbench& b = bench(ctx);
  Model& m = *b.model;
  LocalTrainer& tr = *b.trainer;
  const std::size_t K = in.payloadClients.size(), S = opt_.finetuneSizes.size(), P = static_cast<std::size_t>(numParams_);
  members_ = in.payloads;
  const IndexList test = allIndices(ctx.data.test.size());
  const int C = ctx.data.train.numClasses;
  auto load = [&](std::size_t k) {
    for (std::size_t i = 0; i < P; ++i) m.params()[i] = static_cast<float>(members_[k * P + i]);
  };
  // The vote of the members, each fine-tuned on the first S public samples.
  auto voteAccuracy = [&](int S, std::uint64_t stream, std::vector<double>* memberAcc) {
    std::vector<std::vector<std::int32_t>> votes(K);
    for (std::size_t k = 0; k < K; ++k) {
      load(k);
      fineTuneLastBlock(ctx, m, tr, publicSample(S));
      votes[k] = predictLabels(m, tr, ctx.data.test, test, ctx.cfg.eval.batch);
      if (memberAcc) (*memberAcc)[k] = accuracyOf(votes[k], ctx.data.test, test);
    }
    Rng tie(ctx.cfg.seed, -1, -1, Purpose::Tie, stream);
    return accuracyOf(majorityVote(votes, C, tie), ctx.data.test, test);
  };
  memberAcc_.assign(K * S, 0.0);
  sweepAcc_.assign(S, 0.0);
  std::vector<double> acc(K);
  for (std::size_t s = 0; s < S; ++s) {
    sweepAcc_[s] = voteAccuracy(opt_.finetuneSizes[s], 1 + s, &acc);
    for (std::size_t k = 0; k < K; ++k) memberAcc_[k * S + s] = acc[k];
  }
  accBefore_ = voteAccuracy(0, 0, nullptr);
  accAfter_ = opt_.publicSamples > 0 ? voteAccuracy(opt_.publicSamples, 1000000, nullptr) : kNaN;
  (void)global;
  roundDone_ = true;
}

double OneShotEnsemble::clientAccuracy(ClientContext& c) {
  const std::size_t P = static_cast<std::size_t>(numParams_);
  if (members_.empty()) return kNaN;
  const std::size_t K = members_.size() / P;
  const Dataset& ds = testSetOf(c.fl, c.client);
  std::vector<std::vector<std::int32_t>> votes(K);
  for (std::size_t k = 0; k < K; ++k) {
    for (std::size_t i = 0; i < P; ++i) c.model.params()[i] = static_cast<float>(members_[k * P + i]);
    votes[k] = predictLabels(c.model, c.trainer, ds, c.client.test, c.fl.cfg.eval.batch);
  }
  if (c.client.test.empty()) return kNaN;
  Rng tie(c.fl.cfg.seed, c.client.id, -1, Purpose::Tie);
  return accuracyOf(majorityVote(votes, ds.numClasses, tie), ds, c.client.test);
}

void OneShotEnsemble::packExtra(StatePacker& p) const {
  OneShotLocal::packExtra(p);
  p.doubles(members_);
}

void OneShotEnsemble::unpackExtra(StateReader& r) {
  OneShotLocal::unpackExtra(r);
  members_ = r.doubles();
}

// ---- global ---------------------------------------------------------------------------------------

OneShotGlobal::OneShotGlobal(const ExperimentConfig& cfg)
    : OneShot(cfg, "global"), shard_(static_cast<int>(cfg.algo.getInt("gems.global_shard", 0, 1000000))) {}

void OneShotGlobal::trainPooled(const FlContext& ctx, const DataParallel* dp) {
  Workbench& b = bench(ctx);
  IndexList pooled;
  for (const ClientData& cl : ctx.clients) pooled.insert(pooled.end(), cl.train.begin(), cl.train.end());
  std::memcpy(b.model->params(), init_.data(), init_.size() * sizeof(float));
  Rng rng(ctx.cfg.seed, -1, 0, Purpose::Shuffle);  // the same permutation on every rank
  if (!dp) b.model->setRandomContext(ctx.cfg.seed, -1, 0);  // (data-parallel: keyed per shard)
  b.trainer->train(*b.model, pooled, localTrainOptions(ctx.cfg), rng, -1, 0, nullptr, dp);
  trained_.assign(b.model->params(), b.model->params() + b.model->numParams());
}

void OneShotGlobal::rankUpdate(RankContext& c) {
  DataParallel dp{c.rank, c.ranks, shard_, c.fl.cfg.seed, c.allreduceExact};
  trainPooled(c.fl, &dp);
}

void OneShotGlobal::clientUpdate(ClientContext& c, ClientUpdate& out) {
  out.blockWeight.assign(c.fl.blocks.size(), 0.0);  // the clients' data is pooled (rankUpdate)
}

void OneShotGlobal::serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  (void)in;
  Workbench& b = bench(ctx);
  if (shard_ == 0) trainPooled(ctx, nullptr);  // serial: the plain loop on rank 0
  FEDSILO_ASSERT(trained_.size() == init_.size(), "global: rankUpdate did not run");
  global = sweep(ctx, *b.model, *b.trainer, trained_);
  roundDone_ = true;
}

// ---- public only ----------------------------------------------------------------------------------

void OneShotPublicOnly::clientUpdate(ClientContext& c, ClientUpdate& out) {
  out.blockWeight.assign(c.fl.blocks.size(), 0.0);
}

void OneShotPublicOnly::serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  (void)in;
  Workbench& b = bench(ctx);
  Model& m = *b.model;
  // A model trained from the shared initial model on the first S public samples alone, all layers,
  // with the fine-tuning recipe.
  TrainOptions t = TrainOptions::from(ctx.cfg.train);
  t.epochs = opt_.publicEpochs > 0 ? opt_.publicEpochs : opt_.finetuneEpochs;
  if (opt_.finetuneLr > 0.0) t.lr = opt_.finetuneLr;
  auto trainOn = [&](int S) {
    std::memcpy(m.params(), init_.data(), init_.size() * sizeof(float));
    const IndexList sample = publicSample(S);
    if (sample.empty()) return;
    Rng rng(ctx.cfg.seed, -1, 0, Purpose::Shuffle, static_cast<std::uint64_t>(S));
    m.setRandomContext(ctx.cfg.seed, -1, 0);
    b.trainer->train(m, sample, t, rng, -1, 0);
  };
  sweepAcc_.clear();
  for (int S : opt_.finetuneSizes) {
    trainOn(S);
    sweepAcc_.push_back(testAccuracy(ctx, m, *b.trainer));
  }
  trainOn(0);
  accBefore_ = testAccuracy(ctx, m, *b.trainer);
  trainOn(opt_.publicSamples);
  accAfter_ = opt_.publicSamples > 0 ? testAccuracy(ctx, m, *b.trainer) : kNaN;
  global.assign(m.params(), m.params() + m.numParams());
  roundDone_ = true;
}

std::unique_ptr<Algorithm> makeOneShotAverage(const ExperimentConfig& cfg) { return std::make_unique<OneShotAverage>(cfg); }
std::unique_ptr<Algorithm> makeOneShotLocal(const ExperimentConfig& cfg) { return std::make_unique<OneShotLocal>(cfg); }
std::unique_ptr<Algorithm> makeOneShotEnsemble(const ExperimentConfig& cfg) { return std::make_unique<OneShotEnsemble>(cfg); }
std::unique_ptr<Algorithm> makeOneShotGlobal(const ExperimentConfig& cfg) { return std::make_unique<OneShotGlobal>(cfg); }
std::unique_ptr<Algorithm> makeOneShotPublicOnly(const ExperimentConfig& cfg) { return std::make_unique<OneShotPublicOnly>(cfg); }

}  // namespace fedsilo
