#include "fl/algorithms/gems.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/error.hpp"

namespace fedsilo {

namespace {

// Rng streams of Purpose::Gems per client (the `extra` key).
constexpr std::uint64_t kHeadStream = 0;    // the convex ball's surface samples
constexpr std::uint64_t kFisherStream = 1;  // Fisher: sample choice and sampled classes
constexpr std::uint64_t kNeuronStream = 2;  // + l: hidden neuron l's surface samples

// "min 0.12, median 0.5, max 2.3 over 250" (or every value, when there are at most 10).
std::string spread(std::vector<double> values) {
  const auto text = [](double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", x);
    return std::string(b);
  };
  if (values.empty()) return "none";
  if (values.size() <= 10) {
    std::string s;
    for (double v : values) s += (s.empty() ? "" : ", ") + text(v);
    return s;
  }
  std::sort(values.begin(), values.end());
  return "min " + text(values.front()) + ", median " + text(values[values.size() / 2]) + ", max " +
         text(values.back()) + " over " + std::to_string(values.size());
}

bool neuronModeOf(const ExperimentConfig& cfg) {
  const OneShotOptions o = OneShotOptions::parse(cfg);
  const bool oneHidden = cfg.model.name == ModelPreset::Mlp && cfg.model.hidden.size() == 1;
  if (o.mode == GemsMode::Neuron && !oneHidden)
    throw ConfigError(
        fmt("gems.mode = neuron: needs model = mlp with exactly one hidden layer (model.hidden = 50), got model = ",
            cfg.model.name, " with ", cfg.model.hidden.size(), " hidden layers"));
  return o.mode == GemsMode::Neuron || (o.mode == GemsMode::Auto && oneHidden);
}

}  // namespace

// ---- features and Fisher --------------------------------------------------------------------------

void penultimateFeatures(Model& model, const Dataset& data, const IndexList& idx, Dataset& out) {
  const std::size_t L = model.numLayers();
  if (L == 0 || model.layer(L - 1).kind() != "dense" || model.blocks().empty() ||
      model.blocks().back().offset + model.blocks().back().size != model.numParams())
    throw ConfigError("GEMS: the model's last layer must be a dense layer (the convex head)");
  const int F = L >= 2 ? model.layer(L - 2).outputShape().size() : model.inputSize();
  if (out.f32.empty() && out.labels.empty()) {
    out.shape = Shape{F, 1, 1};
    out.numClasses = data.numClasses;
  }
  FEDSILO_ASSERT(out.dim() == F);
  int widest = model.inputSize();
  for (std::size_t i = 0; i + 1 < L; ++i) widest = std::max(widest, model.layer(i).outputShape().size());
  const int bs = model.maxBatch();
  FEDSILO_ASSERT(bs > 0, "reserve() the model first");
  AlignedVector<float> a(static_cast<std::size_t>(widest) * bs), b(a.size());
  for (std::size_t s = 0; s < idx.size(); s += static_cast<std::size_t>(bs)) {
    const int cnt = static_cast<int>(std::min<std::size_t>(bs, idx.size() - s));
    data.gather(idx.data() + s, cnt, a.data());
    int rows = model.inputSize();
    for (std::size_t i = 0; i + 1 < L; ++i) {
      const int outRows = model.layer(i).outputShape().size();
      CMapT<float> x(a.data(), rows, cnt);
      MapT<float> y(b.data(), outRows, cnt);
      model.layer(i).forward(x, y, false);
      std::swap(a, b);
      rows = outRows;
    }
    out.f32.insert(out.f32.end(), a.begin(), a.begin() + static_cast<std::ptrdiff_t>(F) * cnt);
    for (int j = 0; j < cnt; ++j) out.labels.push_back(data.labels[static_cast<std::size_t>(idx[s + j])]);
  }
}

std::unique_ptr<FeatureHead> makeFeatureHead(const FlContext& ctx, Model& model, const ClientData& c) {
  auto fh = std::make_unique<FeatureHead>();
  IndexList both = c.train;
  both.insert(both.end(), c.val.begin(), c.val.end());
  penultimateFeatures(model, ctx.data.train, both, fh->features);
  fh->train = allIndices(static_cast<Index>(c.train.size()));
  for (std::size_t i = 0; i < c.val.size(); ++i) fh->val.push_back(static_cast<Index>(c.train.size() + i));
  ModelConfig h = ctx.cfg.model;
  h.name = ctx.cfg.model.name == ModelPreset::Svm ? ModelPreset::Svm : ModelPreset::Logreg;
  h.hidden.clear();
  h.dropout = 0.0;
  const int maxBatch = std::max(ctx.cfg.train.batch, ctx.cfg.eval.batch);
  fh->head = buildModel<float>(h, InputSpec{fh->features.shape, ctx.input.numClasses, 0});
  fh->head->reserve(maxBatch);
  const LayerBlock& last = model.blocks().back();
  FEDSILO_ASSERT(fh->head->numParams() == last.size, "head of ", fh->head->numParams(), " parameters for a block of ",
                 last.size);
  std::memcpy(fh->head->params(), model.params() + last.offset, static_cast<std::size_t>(last.size) * sizeof(float));
  fh->trainer = std::make_unique<LocalTrainer>(fh->features, maxBatch);
  return fh;
}

std::vector<double> diagonalFisher(Model& model, LocalTrainer& trainer, const Dataset& data, const IndexList& idx,
                                   Index off, Index size, int count, Rng& rng) {
  std::vector<double> fisher(static_cast<std::size_t>(size), 0.0);
  IndexList pick = idx;
  rng.shuffle(pick);
  if (count >= 0 && static_cast<std::size_t>(count) < pick.size()) pick.resize(static_cast<std::size_t>(count));
  if (pick.empty()) return fisher;
  const int C = model.numClasses();
  std::vector<double> p(static_cast<std::size_t>(C));
  for (Index i : pick) {
    const float* x = trainer.gatherBatch(data, &i, 1);
    CMapT<float> logits = model.forward(x, 1, false);
    double mx = logits(0, 0), z = 0.0;
    for (int c = 1; c < C; ++c) mx = std::max(mx, static_cast<double>(logits(c, 0)));
    for (int c = 0; c < C; ++c) z += (p[c] = std::exp(static_cast<double>(logits(c, 0)) - mx));
    // y ~ softmax: the model's own predictive distribution (the authors' compute_fisher).
    double u = rng.uniform() * z;
    std::int32_t y = C - 1;
    for (int c = 0; c < C; ++c) {
      if (u < p[c]) {
        y = c;
        break;
      }
      u -= p[c];
    }
    model.lossAndGradient(x, &y, 1);  // gradient of -log p_y
    const float* g = model.grads() + off;
    for (Index j = 0; j < size; ++j) fisher[static_cast<std::size_t>(j)] += static_cast<double>(g[j]) * g[j];
  }
  for (double& f : fisher) f /= static_cast<double>(pick.size());
  return fisher;
}

// ---- Gems -----------------------------------------------------------------------------------------

int gemsRounds(const ExperimentConfig& cfg) { return neuronModeOf(cfg) ? 2 : 1; }

Gems::Gems(const ExperimentConfig& cfg) : OneShot(cfg, "gems", gemsRounds(cfg)) {
  neuron_ = neuronModeOf(cfg);
  keepLocal_ = neuron_;  // the driver's per-client evaluation shows the local models
}

void Gems::setup(const FlContext& ctx, std::vector<float>& global) {
  OneShot::setup(ctx, global);
  K_ = static_cast<int>(ctx.clients.size());
  D_ = ctx.input.shape.size();
  C_ = ctx.input.numClasses;
  for (const ClientData& c : ctx.clients)
    if (c.val.empty())
      throw ConfigError(fmt("algorithm = gems: client ", c.id,
                            " has no validation samples; the good-enough test runs on ",
                            "the validation split (data.split = ", ctx.cfg.data.split[0], ",", ctx.cfg.data.split[1],
                            ",", ctx.cfg.data.split[2], ": give it a positive val fraction)"));
  const bool ell = opt_.shape == BallShape::Ellipsoid;
  long long size = 0;
  if (!neuron_) {
    lastBlock_ = ctx.blocks.size() > 1;
    block_ = ctx.blocks.back().size;
    size = block_ + 2 + (ell ? block_ : 0);
  } else {
    H_ = ctx.cfg.model.hidden.at(0);
    const long long round0 = static_cast<long long>(H_) * (D_ + 2);
    const long long dmax = (static_cast<long long>(K_) * H_ + 1) * C_;  // the widest possible head
    size = std::max(round0, dmax + 2 + (ell ? dmax : 0));
  }
  if (size > INT_MAX / 2)
    throw ConfigError(fmt("algorithm = gems: payload of ", size, " values per client is too large"));
  payloadSize_ = static_cast<int>(size);
}

Index Gems::headSize() const { return neuron_ ? static_cast<Index>(hiddenWidth_ + 1) * C_ : block_; }

Gems::Ball Gems::convexBall(const FlContext& ctx, int client, Model& m, LocalTrainer& tr, const Dataset& data,
                            const IndexList& val) const {
  const ExperimentConfig& cfg = ctx.cfg;
  const LayerBlock& blk = m.blocks().back();
  const Index off = blk.offset, d = blk.size;
  float* w = m.params() + off;
  Ball b;
  b.center.assign(w, w + d);
  const std::vector<float> saved(w, w + d);
  auto accuracy = [&] { return tr.evaluate(m, data, val, cfg.eval.batch).accuracy(); };
  // Q(w) = 1 iff accuracy(w, validation) >= epsilon, eq (1).
  auto passes = [&](const std::vector<double>& p) {
    for (Index i = 0; i < d; ++i) w[i] = static_cast<float>(p[static_cast<std::size_t>(i)]);
    return accuracy() >= opt_.epsilon;
  };
  SurfaceGeometry geom;
  if (opt_.shape == BallShape::Ellipsoid || opt_.fisherProp < 1.0) {
    Rng fr(cfg.seed, client, -1, Purpose::Gems, kFisherStream);
    const std::vector<double> F = diagonalFisher(m, tr, data, val, off, d, opt_.fisherSamples, fr);
    if (opt_.shape == BallShape::Ellipsoid) geom.axes = fisherAxes(F);
    geom.mask = fisherMask(F, opt_.fisherProp);
  }
  Rng rng(cfg.seed, client, -1, Purpose::Gems, kHeadStream);
  const RadiusSearchResult r =
      searchRadius(b.center, RadiusSearchOptions{opt_.rMax, opt_.tol, opt_.samples}, geom, rng, passes);
  std::copy(saved.begin(), saved.end(), w);
  b.radius = r.radius;
  b.centerAccuracy = accuracy();
  b.axes = std::move(geom.axes);
  return b;
}

void Gems::putBall(const Ball& b, std::vector<double>& payload) const {
  const std::size_t d = b.center.size();
  FEDSILO_ASSERT(static_cast<std::size_t>(payloadSize_) >= 2 * d + 2 ||
                 (b.axes.empty() && static_cast<std::size_t>(payloadSize_) >= d + 2));
  std::copy(b.center.begin(), b.center.end(), payload.begin());
  payload[d] = b.radius;
  payload[d + 1] = b.centerAccuracy;
  if (!b.axes.empty()) std::copy(b.axes.begin(), b.axes.end(), payload.begin() + static_cast<std::ptrdiff_t>(d + 2));
}

void Gems::hiddenNeuronBalls(ClientContext& c, std::vector<double>& payload) const {
  const ExperimentConfig& cfg = c.fl.cfg;
  const LayerBlock& fc1 = c.model.blocks().front();
  FEDSILO_ASSERT(fc1.size == static_cast<Index>(H_) * (D_ + 1));
  const float* W = c.model.params() + fc1.offset;             // [H][D]
  const float* bias = W + static_cast<std::size_t>(H_) * D_;  // [H]
  const IndexList& val = c.client.val;
  const int N = static_cast<int>(val.size());
  AlignedVector<float> X(static_cast<std::size_t>(D_) * N), wbuf(static_cast<std::size_t>(D_));
  c.fl.data.train.gather(val.data(), N, X.data());
  Eigen::Map<const Eigen::MatrixXf, Eigen::AlignedMax> Xm(X.data(), D_, N);
  Eigen::Map<Eigen::VectorXf, Eigen::AlignedMax> wm(wbuf.data(), D_);
  Eigen::VectorXf z(N), a(N);
  for (int l = 0; l < H_; ++l) {
    std::vector<double> center(static_cast<std::size_t>(D_) + 1);
    for (int i = 0; i < D_; ++i) center[i] = W[static_cast<std::size_t>(l) * D_ + i];
    center[D_] = bias[l];
    std::copy(W + static_cast<std::size_t>(l) * D_, W + static_cast<std::size_t>(l + 1) * D_, wbuf.begin());
    z.noalias() = Xm.transpose() * wm;
    z = (z.array() + bias[l]).max(0.0f).matrix();
    // Q_neuron, eq (3): ||relu(X^T w' + b') - z||_2 / N_val <= epsilon_j.
    auto passes = [&](const std::vector<double>& p) {
      for (int i = 0; i < D_; ++i) wbuf[i] = static_cast<float>(p[i]);
      const float b = static_cast<float>(p[D_]);
      a.noalias() = Xm.transpose() * wm;
      double s = 0.0;
      for (int j = 0; j < N; ++j) {
        const double dlt = static_cast<double>(std::max(a[j] + b, 0.0f)) - z[j];
        s += dlt * dlt;
      }
      return std::sqrt(s) / N <= opt_.neuronEpsilon;
    };
    Rng rng(cfg.seed, c.client.id, -1, Purpose::Gems, kNeuronStream + static_cast<std::uint64_t>(l));
    const RadiusSearchResult r = searchRadius(center, RadiusSearchOptions{opt_.rMax, opt_.neuronTol, opt_.samples},
                                              SurfaceGeometry{}, rng, passes);
    double* row = payload.data() + static_cast<std::size_t>(l) * (D_ + 2);
    std::copy(center.begin(), center.end(), row);
    row[D_ + 1] = r.radius;
  }
}

Gems::Workbench& Gems::wideBench(const FlContext& ctx) const {
  FEDSILO_ASSERT(hiddenWidth_ > 0, "the GEMS hidden layer is not known yet");
  if (!wide_.model || wideWidth_ != hiddenWidth_) {
    ModelConfig w = ctx.cfg.model;
    w.hidden = {hiddenWidth_};
    wide_ = makeBench(ctx, w);
    wideWidth_ = hiddenWidth_;
  }
  return wide_;
}

void Gems::loadWide(Model& m) const {
  const LayerBlock& fc1 = m.blocks().front();
  const int W = hiddenWidth_;
  FEDSILO_ASSERT(fc1.size == static_cast<Index>(W) * (D_ + 1) &&
                 hiddenLayer_.size() == static_cast<std::size_t>(fc1.size));
  float* w = m.params() + fc1.offset;
  float* b = w + static_cast<std::size_t>(W) * D_;
  for (int i = 0; i < W; ++i) {
    const double* row = hiddenLayer_.data() + static_cast<std::size_t>(i) * (D_ + 1);
    for (int j = 0; j < D_; ++j) w[static_cast<std::size_t>(i) * D_ + j] = static_cast<float>(row[j]);
    b[i] = static_cast<float>(row[D_]);
  }
}

void Gems::headRound(ClientContext& c, ClientUpdate& out) {
  const ExperimentConfig& cfg = c.fl.cfg;
  Workbench& wb = wideBench(c.fl);
  Model& m = *wb.model;
  Rng init(cfg.seed, -1, 1, Purpose::Init);  // the same head initialisation at every client
  m.initialize(init);
  loadWide(m);
  std::unique_ptr<FeatureHead> fh = makeFeatureHead(c.fl, m, c.client);
  TrainOptions t = TrainOptions::from(cfg.train);
  t.epochs = opt_.headEpochs;
  Rng rng = c.shuffleRng();
  out.trainLoss = fh->trainer->train(*fh->head, fh->train, t, rng, c.client.id, c.round).meanLoss;
  putBall(convexBall(c.fl, c.client.id, *fh->head, *fh->trainer, fh->features, fh->val), out.payload);
}

void Gems::clientUpdate(ClientContext& c, ClientUpdate& out) {
  out.blockWeight.assign(c.fl.blocks.size(), 0.0);
  out.payload.assign(static_cast<std::size_t>(payloadSize_), 0.0);
  if (neuron_) {
    if (c.round == 0) {
      out.trainLoss = trainLocal(c);
      hiddenNeuronBalls(c, out.payload);
    } else {
      headRound(c, out);
    }
    return;
  }
  if (!lastBlock_) {
    out.trainLoss = trainLocal(c);
    putBall(convexBall(c.fl, c.client.id, c.model, c.trainer, c.fl.data.train, c.client.val), out.payload);
    return;
  }
  // Last block over the shared initial model's frozen lower layers (c.model holds it on entry).
  c.model.setParams(init_);
  std::unique_ptr<FeatureHead> fh = makeFeatureHead(c.fl, c.model, c.client);
  Rng rng = c.shuffleRng();
  out.trainLoss =
      fh->trainer->train(*fh->head, fh->train, localTrainOptions(c.fl.cfg), rng, c.client.id, c.round).meanLoss;
  putBall(convexBall(c.fl, c.client.id, *fh->head, *fh->trainer, fh->features, fh->val), out.payload);
}

void Gems::aggregateHidden(const FlContext& ctx, const ServerInput& in) {
  requireAllClients(in.payloadClients.size(), ctx);
  const int dim = D_ + 1, N = K_ * H_;
  BallSet balls;
  balls.d = dim;
  for (int k = 0; k < K_; ++k) {
    const double* row = in.payloads.data() + static_cast<std::size_t>(k) * payloadSize_;
    for (int l = 0; l < H_; ++l) {
      const double* n = row + static_cast<std::size_t>(l) * (D_ + 2);
      balls.centers.insert(balls.centers.end(), n, n + dim);
      balls.radii.push_back(n[dim]);
    }
  }
  Rng rng(ctx.cfg.seed, -1, -1, Purpose::KMeans);
  const int k = std::min(opt_.clusters, N);
  const std::vector<int> cluster = kMeans(balls.centers, N, dim, k, rng, opt_.kmeansIters);
  const NeuronMergeResult merged =
      mergeNeurons(balls, cluster, k, IntersectOptions{opt_.intersectLr, opt_.intersectSteps});
  hiddenLayer_ = merged.neurons;
  hiddenWidth_ = merged.width;
  neuronRadius_ = balls.radii;
  neuronCluster_.assign(cluster.begin(), cluster.end());
  neuronGroup_.assign(merged.groupOf.begin(), merged.groupOf.end());
  mergedGroups_ = merged.mergedGroups;
  mergedFound_ = merged.mergedFound;
  ctx.announce().decision(fmt("gems: round ", in.round, ": hidden layer of width ", hiddenWidth_, " from ", N,
                              " neuron balls (", K_, " clients x ", H_, ") in ", k, " k-means clusters; ",
                              mergedGroups_, " groups merged, ", mergedFound_,
                              " of them with a common intersection; neuron radii ", spread(neuronRadius_)));
}

void Gems::aggregateHeads(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  requireAllClients(in.payloadClients.size(), ctx);
  const Index d = headSize();
  const bool ell = opt_.shape == BallShape::Ellipsoid;
  BallSet balls;
  balls.d = static_cast<int>(d);
  centerAcc_.clear();
  for (int k = 0; k < K_; ++k) {
    const double* row = in.payloads.data() + static_cast<std::size_t>(k) * payloadSize_;
    balls.centers.insert(balls.centers.end(), row, row + d);
    balls.radii.push_back(row[d]);
    centerAcc_.push_back(row[d + 1]);
    if (ell) balls.axes.insert(balls.axes.end(), row + d + 2, row + 2 * d + 2);
  }
  const IntersectResult r = intersectBalls(balls, IntersectOptions{opt_.intersectLr, opt_.intersectSteps});
  centers_ = balls.centers;
  radii_ = balls.radii;
  axes_ = balls.axes;
  found_ = r.found;
  objective_ = r.objective;
  ctx.announce().decision(fmt("gems: round ", in.round, ": radii found per client ", spread(radii_), "; ",
                              found_ ? "a point in every good-enough ball" : "no common point of the balls",
                              " (objective ", objective_, ")", neuron_ ? fmt(", head width ", headSize()) : ""));
  Workbench& b = neuron_ ? wideBench(ctx) : bench(ctx);
  Model& m = *b.model;
  if (neuron_) {
    Rng init(ctx.cfg.seed, -1, 1, Purpose::Init);
    m.initialize(init);
    loadWide(m);
  } else {
    m.setParams(init_);
    const LayerBlock& last = m.blocks().back();
    hiddenWidth_ = lastBlock_ ? static_cast<int>(last.size / C_ - 1) : 0;
  }
  const LayerBlock& last = m.blocks().back();
  FEDSILO_ASSERT(last.size == d);
  for (Index i = 0; i < d; ++i) m.params()[last.offset + i] = static_cast<float>(r.w[static_cast<std::size_t>(i)]);
  const std::vector<float> raw(m.params(), m.params() + m.numParams());
  model_.assign(raw.begin(), raw.end());
  std::vector<float> tuned = sweep(ctx, m, *b.trainer, raw);
  announceFineTuning(ctx);
  if (neuron_)
    final_ = std::move(tuned);
  else
    global = std::move(tuned);
}

// The fine-tuning sweep's test accuracies, per public-sample size (gems.finetune_sizes).
void Gems::announceFineTuning(const FlContext& ctx) const {
  std::string sizes;
  for (std::size_t i = 0; i < sweepAcc_.size() && i < opt_.finetuneSizes.size(); ++i)
    sizes += fmt(i ? ", " : "", opt_.finetuneSizes[i], " -> ", sweepAcc_[i]);
  const std::string final =
      opt_.publicSamples > 0 ? fmt("; the final model is tuned on ", opt_.publicSamples, ": ", accAfter_) : "";
  ctx.announce().decision(fmt("gems: test accuracy ", accBefore_, " before fine-tuning; after fine-tuning the last "
                              "layer on S public samples (S -> accuracy): ", sizes, final));
}

void Gems::serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  if (neuron_ && in.round == 0)
    aggregateHidden(ctx, in);
  else
    aggregateHeads(ctx, in, global);
}

std::optional<EvalStats> Gems::evaluateClient(ClientContext& c) {
  if (!neuron_) return std::nullopt;  // the global model, a vector of the working model
  const Dataset& ds = c.fl.testSet(c.client);
  if (final_.empty()) return EvalStats(ds.numClasses);  // before round 1: nothing to score
  Workbench& wb = wideBench(c.fl);
  wb.model->setParams(final_);
  return wb.trainer->evaluate(*wb.model, ds, c.client.test, c.fl.cfg.eval.batch);
}

double Gems::clientAccuracy(ClientContext& c) {
  if (!neuron_) return OneShot::clientAccuracy(c);
  return evaluateClient(c)->accuracy();
}

void Gems::packExtra(StatePacker& p) const {
  p.doubles(centers_);
  p.doubles(radii_);
  p.doubles(centerAcc_);
  p.doubles(axes_);
  p.doubles(model_);
  p.scalar(found_ ? 1.0 : 0.0);
  p.scalar(objective_);
  p.scalar(hiddenWidth_);
  p.doubles(hiddenLayer_);
  p.doubles(neuronRadius_);
  p.doubles(neuronCluster_);
  p.doubles(neuronGroup_);
  p.scalar(mergedGroups_);
  p.scalar(mergedFound_);
  p.floats(final_);
}

void Gems::unpackExtra(StateReader& r) {
  centers_ = r.doubles();
  radii_ = r.doubles();
  centerAcc_ = r.doubles();
  axes_ = r.doubles();
  model_ = r.doubles();
  found_ = r.scalar() != 0.0;
  objective_ = r.scalar();
  hiddenWidth_ = static_cast<int>(r.scalar());
  hiddenLayer_ = r.doubles();
  neuronRadius_ = r.doubles();
  neuronCluster_ = r.doubles();
  neuronGroup_ = r.doubles();
  mergedGroups_ = static_cast<int>(r.scalar());
  mergedFound_ = static_cast<int>(r.scalar());
  final_ = r.floats();
}

void Gems::recordExtra(const FlContext& ctx, RecordSink& sink) const {
  const auto K = static_cast<std::uint64_t>(K_);
  const std::uint64_t d = K > 0 ? centers_.size() / K : 0;
  sink.writeArray("/gems/center", centers_, {K, d});
  sink.writeArray("/gems/radius", radii_, {K});
  sink.writeArray("/gems/center_accuracy", centerAcc_, {K});
  if (opt_.shape == BallShape::Ellipsoid) sink.writeArray("/gems/axes", axes_, {K, d});
  sink.writeIntScalar("/gems/found", found_ ? 1 : 0);
  sink.writeScalar("/gems/objective", objective_);
  sink.writeIntScalar("/gems/hidden_width", hiddenWidth_);
  sink.writeArray("/gems/model", model_, {static_cast<std::uint64_t>(model_.size())});
  if (neuron_) {
    const auto H = static_cast<std::uint64_t>(H_);
    auto ints = [](const std::vector<double>& v) { return std::vector<std::int64_t>(v.begin(), v.end()); };
    sink.writeArray("/gems/neuron/radius", neuronRadius_, {K, H});
    sink.writeIntArray("/gems/neuron/cluster", ints(neuronCluster_), {K, H});
    sink.writeIntArray("/gems/neuron/group", ints(neuronGroup_), {K, H});
    sink.writeIntScalar("/gems/neuron/merged_groups", mergedGroups_);
    sink.writeIntScalar("/gems/neuron/merged_found", mergedFound_);
  }
  (void)ctx;
}

std::unique_ptr<Algorithm> makeGems(const ExperimentConfig& cfg) { return std::make_unique<Gems>(cfg); }

}  // namespace fedsilo
