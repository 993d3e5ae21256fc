#include "fl/experiment.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>

#include "core/timer.hpp"
#include "data/loaders.hpp"
#include "data/partition.hpp"
#include "fl/fairness.hpp"
#include "fl/personal_store.hpp"
#include "nn/presets.hpp"

namespace fedsilo {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Throws the NumericError of a diverged client if block b of `v` holds a NaN or Inf.
void requireFiniteBlock(const float* v, const LayerBlock& block, int client, int round, const char* what) {
  const float* p = v + block.offset;
  for (Index i = 0; i < block.size; ++i)
    if (!std::isfinite(p[i]))
      throw NumericError(fmt("client ", client, " round ", round, ": ", what, " of layer ", block.name, " contains ", p[i],
                             " (set fl.skip_diverged = true to drop such updates)"));
}
}  // namespace

Experiment::Experiment(const ExperimentConfig& cfg, const Communicator& comm)
    : cfg_(cfg), comm_(comm), placement_(cfg.clients, comm.size()) {
  // Every rank reads the data itself (no broadcast of the dataset); failures are agreed on.
  coordinated(comm_, [&] { data_ = loadDataset(cfg_.data, cfg_.seed); });
  coordinated(comm_, [&] {
    std::vector<IndexList> parts = partitionData(data_, cfg_.clients, cfg_.partition, cfg_.seed);
    clients_.resize(static_cast<std::size_t>(cfg_.clients));
    const bool ownTest = !data_.naturalClientTest.empty() && cfg_.partition.scheme == "natural";
    for (int k = 0; k < cfg_.clients; ++k) {
      ClientData& c = clients_[k];
      c.id = k;
      if (ownTest) {
        // Natural partitions with their own test files: the client's test split is its test data,
        // its training slice is split into train/val only (renormalised fractions).
        std::vector<double> f = cfg_.data.split;
        const double tv = f[0] + f[1];
        std::vector<double> f2 = tv > 0 ? std::vector<double>{f[0] / tv, f[1] / tv, 0.0} : std::vector<double>{1, 0, 0};
        ClientSplit s = splitClient(parts[k], f2, cfg_.seed, k);
        c.train = std::move(s.train);
        c.val = std::move(s.val);
        for (Index i = 0; i < data_.test.size(); ++i)
          if (data_.naturalClientTest[static_cast<std::size_t>(i)] == k) c.test.push_back(i);
        c.testFromTestSet = true;
      } else {
        ClientSplit s = splitClient(parts[k], cfg_.data.split, cfg_.seed, k);
        c.train = std::move(s.train);
        c.val = std::move(s.val);
        c.test = std::move(s.test);
      }
      if (c.train.empty())
        throw ConfigError(fmt("client ", k, " has no training samples (slice of ", parts[k].size(),
                              " samples, data.split train fraction ", cfg_.data.split[0], "): use fewer clients"));
    }
  });
  if (cfg_.fl.placement == "samples") {  // the same on every rank: every rank holds every client's lists
    std::vector<std::int64_t> w(clients_.size());
    for (std::size_t k = 0; k < clients_.size(); ++k) w[k] = static_cast<std::int64_t>(clients_[k].train.size());
    placement_ = Placement(w, comm_.size());
  }
  coordinated(comm_, [&] {
    InputSpec in{data_.train.shape, data_.train.numClasses, data_.vocabSize};
    model_ = buildModel<float>(cfg_.model, in);
    const int maxBatch = std::max(cfg_.train.batch, cfg_.eval.batch);
    model_->reserve(maxBatch);
    trainer_ = std::make_unique<LocalTrainer>(data_.train, maxBatch);
    // The shared initial model: one stream keyed by the experiment seed only.
    Rng init(cfg_.seed, -1, -1, Purpose::Init);
    model_->initialize(init);
    global_.assign(model_->params(), model_->params() + model_->numParams());
    ctx_.reset(new FlContext{cfg_, data_, clients_, placement_, comm_.rank(), model_->blocks(), model_->numParams(), in});
    alg_ = makeAlgorithm(cfg_);
    alg_->setup(*ctx_, global_);
  });
  const int mine = placement_.count(comm_.rank());
  const std::size_t L = model_->blocks().size();
  lastAccLocal_.assign(mine, kNaN);
  lastF1Local_.assign(mine, kNaN);
  lastLossLocal_.assign(mine, kNaN);
  sensRound0_.assign(mine * L, kNaN);
  sensFinal_.assign(mine * L, kNaN);
}

Experiment::~Experiment() = default;

void Experiment::writeClientTable(RecordSink& sink) {
  const int r = comm_.rank();
  const int C = data_.train.numClasses;
  std::vector<std::int64_t> rank, ntr, nval, nte, counts;
  for (int k = placement_.first(r); k < placement_.end(r); ++k) {
    const ClientData& c = clients_[k];
    rank.push_back(r);
    ntr.push_back(static_cast<std::int64_t>(c.train.size()));
    nval.push_back(static_cast<std::int64_t>(c.val.size()));
    nte.push_back(static_cast<std::int64_t>(c.test.size()));
    for (Index v : data_.train.labelCounts(c.train)) counts.push_back(v);
  }
  sink.writeClientIntRows("/clients/rank", rank, 1);
  sink.writeClientIntRows("/clients/num_train", ntr, 1);
  sink.writeClientIntRows("/clients/num_val", nval, 1);
  sink.writeClientIntRows("/clients/num_test", nte, 1);
  sink.writeClientIntRows("/clients/label_counts", counts, static_cast<std::uint64_t>(C));
}

void Experiment::evaluateClients(std::vector<double>& acc, std::vector<double>& f1, std::vector<double>& loss) {
  const int r = comm_.rank();
  std::vector<float> saved(model_->params(), model_->params() + model_->numParams());
  bool holdsGlobal = false;  // the model holds the global parameters (loaded once for all such clients)
  for (int k = placement_.first(r), i = 0; k < placement_.end(r); ++k, ++i) {
    const ClientData& c = clients_[k];
    if (c.test.empty()) {
      // nothing to evaluate: no parameters to load (EvalStats of no samples)
    } else if (alg_->evalParams(*ctx_, k, global_, model_->params())) {
      holdsGlobal = false;
    } else if (!holdsGlobal) {
      std::memcpy(model_->params(), global_.data(), global_.size() * sizeof(float));
      holdsGlobal = true;
    }
    const Dataset& ds = c.testFromTestSet ? data_.test : data_.train;
    EvalStats st = trainer_->evaluate(*model_, ds, c.test, cfg_.eval.batch);
    acc[i] = st.accuracy();
    f1[i] = st.macroF1();
    loss[i] = st.meanLoss();
  }
  std::memcpy(model_->params(), saved.data(), saved.size() * sizeof(float));
}

void Experiment::evaluateGlobal(double& acc, double& loss) {
  if (!alg_->hasGlobalModel() || data_.test.size() == 0) {
    acc = loss = kNaN;
    return;
  }
  // Fixed chunks independent of the rank count; chunk c is evaluated by rank c % P; integer counts
  // and exact loss sums make the result identical at any rank count.
  std::memcpy(model_->params(), global_.data(), global_.size() * sizeof(float));
  const Index n = data_.test.size();
  const Index chunk = cfg_.eval.batch;
  std::int64_t correct = 0;
  ExactSum lossSum(1);
  IndexList idx;
  for (Index c = 0, ci = 0; c < n; c += chunk, ++ci) {
    if (ci % comm_.size() != comm_.rank()) continue;
    idx.clear();
    for (Index i = c; i < std::min(n, c + chunk); ++i) idx.push_back(i);
    EvalStats st = trainer_->evaluate(*model_, data_.test, idx, cfg_.eval.batch);
    correct += st.correct;
    lossSum.add(0, st.lossSum);
  }
  correct = comm_.allreduceSum<std::int64_t>(correct);
  comm_.allreduceExact(lossSum);
  acc = static_cast<double>(correct) / static_cast<double>(n);
  loss = lossSum.value(0) / static_cast<double>(n);
}

RoundSummary Experiment::runRound(int round, RecordSink& sink) {
  Timer roundTimer;
  RoundSummary rs;
  rs.round = round;
  const FlContext& ctx = *ctx_;
  const int L = ctx.numBlocks();
  const int r = comm_.rank();
  const bool first = round == 0, last = round == cfg_.rounds - 1;
  const std::vector<int> selected = alg_->selectClients(ctx, round);
  const std::vector<char> reduced = alg_->reducedBlocks(ctx, round);
  FEDSILO_ASSERT(static_cast<int>(reduced.size()) == L);
  std::vector<Index> accOffset(L, -1);
  Index accSize = 0;
  for (int b = 0; b < L; ++b)
    if (reduced[b]) {
      accOffset[b] = accSize;
      accSize += ctx.blocks[b].size;
    }
  const int S = alg_->sumsSize(), G = alg_->payloadSize();
  // Layout of the one exact reduction: [sum w v (reduced blocks) | sum w per block | sums].
  acc_.resize(static_cast<std::size_t>(accSize + L + S));

  const int mine = placement_.count(r), firstLocal = placement_.first(r);
  std::vector<double> weightLocal(mine, 0.0), participatedLocal(mine, 0.0);
  std::vector<std::vector<double>> blockWeightLocal(mine);
  std::vector<double> payloadMine, sensMine;  // rows prefixed by client id
  Timer trainTimer;
  if (alg_->usesRankUpdate()) {
    coordinated(comm_, [&] {
      RankContext rc{ctx, round, comm_.rank(), comm_.size(), [this](ExactSum& s) { comm_.allreduceExact(s); }};
      alg_->rankUpdate(rc);
    });
  }
  PersonalStore* personal = alg_->personalStore();
  coordinated(comm_, [&] {
    for (int k : selected) {
      if (!ctx.isLocal(k)) continue;
      if (cfg_.fl.dropout > 0.0 && Rng(cfg_.seed, k, round, Purpose::ClientDropout).bernoulli(cfg_.fl.dropout))
        continue;  // dropped out: sends nothing
      const int li = k - firstLocal;
      std::memcpy(model_->params(), global_.data(), global_.size() * sizeof(float));
      model_->setRandomContext(cfg_.seed, k, round);
      ClientContext cc{ctx, clients_[k], round, *model_, *trainer_, global_};
      ClientUpdate up;
      // The client's persistent state as it was before this round, put back if the update is dropped.
      std::optional<std::vector<float>> before;
      if (personal && cfg_.fl.skipDiverged) before = personal->snapshot(k);
      try {
        alg_->clientUpdate(cc, up);
        FEDSILO_ASSERT(static_cast<int>(up.blockWeight.size()) == L, "algorithm sent ", up.blockWeight.size(), " block weights");
        FEDSILO_ASSERT(static_cast<int>(up.sums.size()) == S && static_cast<int>(up.payload.size()) == G);
        const float* v = up.vector ? up.vector : model_->params();
        for (int b = 0; b < L; ++b)
          if (reduced[b] && up.blockWeight[b] != 0.0) requireFiniteBlock(v, ctx.blocks[b], k, round, "update");
        // Every parameter the client keeps for later rounds (local layers too, which are never reduced).
        if (const std::vector<float>* kept = personal ? personal->find(k) : nullptr)
          for (int b = 0; b < L; ++b) requireFiniteBlock(kept->data(), ctx.blocks[b], k, round, "personal state");
      } catch (const NumericError& e) {
        if (!cfg_.fl.skipDiverged) throw;
        if (personal) personal->restore(k, std::move(before));  // the dropped round leaves no trace
        std::fprintf(stderr, "fedsilo: warning: %s; update dropped (fl.skip_diverged)\n", e.what());
        participatedLocal[li] = -1.0;  // recorded as diverged
        continue;
      }
      const float* v = up.vector ? up.vector : model_->params();
      for (int b = 0; b < L; ++b) {
        if (!reduced[b] || up.blockWeight[b] == 0.0) continue;
        acc_.addScaled(static_cast<std::size_t>(accOffset[b]), v + ctx.blocks[b].offset,
                       static_cast<std::size_t>(ctx.blocks[b].size), up.blockWeight[b]);
        acc_.add(static_cast<std::size_t>(accSize + b), up.blockWeight[b]);
      }
      for (int s = 0; s < S; ++s) acc_.add(static_cast<std::size_t>(accSize + L + s), up.sums[s]);
      participatedLocal[li] = 1.0;
      blockWeightLocal[li] = up.blockWeight;
      if (G > 0) {
        payloadMine.push_back(k);
        payloadMine.insert(payloadMine.end(), up.payload.begin(), up.payload.end());
      }
      if (first || last) {
        std::vector<double> s = layerSensitivity(*model_, *trainer_, clients_[k].train, cfg_.train.batch, cfg_.seed, k,
                                                 round, alg_->sensitivityIncludesBias());
        std::copy(s.begin(), s.end(), (first ? sensRound0_ : sensFinal_).begin() + static_cast<std::ptrdiff_t>(li) * L);
        if (first && last) std::copy(s.begin(), s.end(), sensFinal_.begin() + static_cast<std::ptrdiff_t>(li) * L);
        sensMine.push_back(k);
        sensMine.insert(sensMine.end(), s.begin(), s.end());
      }
    }
  });
  rs.trainSeconds = comm_.allreduceMax(trainTimer.seconds());

  comm_.reduceExact(acc_, 0);
  std::vector<double> payloads = comm_.gatherv(payloadMine, 0);
  std::vector<double> sens = (first || last) ? comm_.gatherv(sensMine, 0) : std::vector<double>{};

  std::vector<double> blockWeightSum(L, 0.0);
  std::vector<double> state;
  coordinated(comm_, [&] {
    if (!comm_.isRoot()) return;
    ServerInput in;
    in.round = round;
    in.acc = &acc_;
    in.accOffset = accOffset;
    for (int b = 0; b < L; ++b) blockWeightSum[b] = acc_.value(static_cast<std::size_t>(accSize + b));
    in.blockWeightSum = blockWeightSum;
    for (int s = 0; s < S; ++s) in.sums.push_back(acc_.value(static_cast<std::size_t>(accSize + L + s)));
    for (std::size_t i = 0; i < payloads.size(); i += static_cast<std::size_t>(G) + 1) {
      in.payloadClients.push_back(static_cast<int>(payloads[i]));
      in.participants.push_back(static_cast<int>(payloads[i]));
      in.payloads.insert(in.payloads.end(), payloads.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                         payloads.begin() + static_cast<std::ptrdiff_t>(i) + 1 + G);
    }
    for (std::size_t i = 0; i < sens.size(); i += static_cast<std::size_t>(L) + 1) {
      in.sensitivityClients.push_back(static_cast<int>(sens[i]));
      in.sensitivity.insert(in.sensitivity.end(), sens.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                            sens.begin() + static_cast<std::ptrdiff_t>(i) + 1 + L);
    }
    alg_->serverUpdate(ctx, in, global_);
    for (float v : global_)
      if (!std::isfinite(v)) throw NumericError(fmt("round ", round, ": the aggregated global model contains ", v));
    state = alg_->serverState();
  });
  // Broadcast the new global state.
  comm_.bcast(global_.data(), global_.size(), 0);
  comm_.bcast(blockWeightSum.data(), blockWeightSum.size(), 0);
  comm_.bcast(state, 0);
  if (!comm_.isRoot()) alg_->setServerState(state);
  rs.participants = static_cast<int>(comm_.allreduceSum<std::int64_t>(
      static_cast<std::int64_t>(std::count(participatedLocal.begin(), participatedLocal.end(), 1.0))));

  // Each participant's share of the aggregate: parameter-weighted over the reduced blocks.
  double denom = 0.0;
  for (int b = 0; b < L; ++b)
    if (reduced[b]) denom += blockWeightSum[b] * static_cast<double>(ctx.blocks[b].size);
  for (int i = 0; i < mine; ++i) {
    if (blockWeightLocal[i].empty() || denom <= 0.0) continue;
    double num = 0.0;
    for (int b = 0; b < L; ++b)
      if (reduced[b]) num += blockWeightLocal[i][b] * static_cast<double>(ctx.blocks[b].size);
    weightLocal[i] = num / denom;
  }

  const bool evalNow = last || (cfg_.eval.every > 0 && round % cfg_.eval.every == 0);
  rs.evaluated = evalNow;
  // Every round appends one row; the evaluation entries of a round that was not evaluated are NaN.
  std::vector<double> acc(mine, kNaN), f1(mine, kNaN), loss(mine, kNaN);
  rs.globalAccuracy = rs.globalLoss = rs.meanClientAccuracy = rs.worst10 = kNaN;
  if (evalNow) {
    coordinated(comm_, [&] {
      evaluateClients(acc, f1, loss);
      lastAccLocal_ = acc;
      lastF1Local_ = f1;
      lastLossLocal_ = loss;
    });
    evaluateGlobal(rs.globalAccuracy, rs.globalLoss);
    lastGlobalAcc_ = rs.globalAccuracy;
    lastGlobalLoss_ = rs.globalLoss;
    finalGlobalEvaluated_ = last;
    everEvaluated_ = true;
    const std::vector<double> all = comm_.gatherv(acc, 0);
    double m = 0.0, w = 0.0;
    if (comm_.isRoot()) {
      m = mean(all);
      w = worstFraction(all);
    }
    comm_.bcast(&m, 1, 0);
    comm_.bcast(&w, 1, 0);
    rs.meanClientAccuracy = m;
    rs.worst10 = w;
  }
  rs.seconds = comm_.allreduceMax(roundTimer.seconds());
  sink.appendRoundInt("round", round);
  sink.appendRoundScalar("global_accuracy", rs.globalAccuracy);
  sink.appendRoundScalar("global_loss", rs.globalLoss);
  sink.appendRoundClients("client_accuracy", acc);
  sink.appendRoundClients("client_f1", f1);
  sink.appendRoundClients("client_loss", loss);
  sink.appendRoundClients("weight", weightLocal);
  sink.appendRoundClients("participated", participatedLocal);
  sink.appendRoundScalar("seconds", rs.seconds);
  sink.appendRoundScalar("train_seconds", rs.trainSeconds);
  sink.endRound();
  roundSeconds_.push_back(rs.seconds);
  return rs;
}

void Experiment::run(RecordSink& sink, const std::function<bool(const RoundSummary&)>& onRound) {
  if (nextRound_ == 0) writeClientTable(sink);
  for (int t = nextRound_; t < cfg_.rounds; ++t) {
    RoundSummary rs = runRound(t, sink);
    nextRound_ = t + 1;
    if (onRound && !onRound(rs)) return;
  }
  // End-of-training client hooks (FedBABU fine-tuning, ...), then the final evaluation is re-done
  // only if the hook changed anything the client uses: algorithms that fine-tune re-evaluate here.
  coordinated(comm_, [&] {
    const int r = comm_.rank();
    for (int k = placement_.first(r); k < placement_.end(r); ++k) {
      std::memcpy(model_->params(), global_.data(), global_.size() * sizeof(float));
      model_->setRandomContext(cfg_.seed, k, cfg_.rounds);
      ClientContext cc{*ctx_, clients_[k], cfg_.rounds, *model_, *trainer_, global_};
      alg_->finishClient(cc);
    }
    evaluateClients(lastAccLocal_, lastF1Local_, lastLossLocal_);
  });
}

void Experiment::checkpoint(StateArchive& ar) {
  const int first = placement_.first(comm_.rank()), mine = placement_.count(comm_.rank());
  const std::size_t L = model_->blocks().size();
  std::vector<double> scalars{static_cast<double>(nextRound_), lastGlobalAcc_, everEvaluated_ ? 1.0 : 0.0};
  std::unordered_map<int, std::vector<double>> figures, sens0, sensFinal;
  if (ar.saving())
    for (int i = 0; i < mine; ++i) {
      const auto at = sensRound0_.begin() + static_cast<std::ptrdiff_t>(i * L);
      const auto atF = sensFinal_.begin() + static_cast<std::ptrdiff_t>(i * L);
      figures[first + i] = {lastAccLocal_[i], lastF1Local_[i], lastLossLocal_[i]};
      sens0[first + i].assign(at, at + static_cast<std::ptrdiff_t>(L));
      sensFinal[first + i].assign(atF, atF + static_cast<std::ptrdiff_t>(L));
    }
  ar.doubles("driver/scalars", scalars);
  ar.floats("driver/global", global_);
  ar.doubles("driver/round_seconds", roundSeconds_);
  ar.clientDoubles("driver/client_figures", figures);
  ar.clientDoubles("driver/sensitivity_round0", sens0);
  ar.clientDoubles("driver/sensitivity_final", sensFinal);
  if (!ar.saving()) {
    FEDSILO_ASSERT(scalars.size() == 3 && global_.size() == static_cast<std::size_t>(model_->numParams()),
                   "checkpoint driver state does not fit this model");
    nextRound_ = static_cast<int>(scalars[0]);
    lastGlobalAcc_ = scalars[1];
    everEvaluated_ = scalars[2] != 0.0;
    for (int i = 0; i < mine; ++i) {
      const auto f = figures.find(first + i), s0 = sens0.find(first + i), sf = sensFinal.find(first + i);
      FEDSILO_ASSERT(f != figures.end() && f->second.size() == 3 && s0 != sens0.end() && s0->second.size() == L &&
                         sf != sensFinal.end() && sf->second.size() == L,
                     "checkpoint lacks the driver state of client ", first + i);
      lastAccLocal_[i] = f->second[0];
      lastF1Local_[i] = f->second[1];
      lastLossLocal_[i] = f->second[2];
      std::copy(s0->second.begin(), s0->second.end(), sensRound0_.begin() + static_cast<std::ptrdiff_t>(i * L));
      std::copy(sf->second.begin(), sf->second.end(), sensFinal_.begin() + static_cast<std::ptrdiff_t>(i * L));
    }
  }
  alg_->checkpoint(ar);
}

void Experiment::writeFinal(RecordSink& sink) {
  const FlContext& ctx = *ctx_;
  const std::size_t L = ctx.blocks.size();
  // Summary of the final client accuracies (replicated: computed on root, broadcast).
  std::vector<double> allAcc = comm_.gatherv(lastAccLocal_, 0);
  std::vector<double> allF1 = comm_.gatherv(lastF1Local_, 0);
  std::vector<double> figures(9, kNaN);
  if (comm_.isRoot()) {
    AccuracySummary s = summarize(allAcc);
    std::vector<double> w(clients_.size());
    for (std::size_t k = 0; k < clients_.size(); ++k) w[k] = static_cast<double>(clients_[k].train.size());
    figures = {s.mean, s.median, s.worst10, s.best10, s.variance, s.jain, efficiency(allAcc, w), median(roundSeconds_),
               mean(allF1)};
  }
  comm_.bcast(figures.data(), figures.size(), 0);
  sink.writeClientRows("/summary/client_accuracy", lastAccLocal_, 1);
  sink.writeClientRows("/summary/client_f1", lastF1Local_, 1);
  sink.writeClientRows("/summary/client_loss", lastLossLocal_, 1);
  const char* names[] = {"mean", "median", "worst10", "best10", "variance", "jain", "efficiency", "seconds_per_round", "mean_f1"};
  for (std::size_t i = 0; i < figures.size(); ++i) sink.writeScalar(std::string("/summary/") + names[i], figures[i]);
  double gacc = kNaN, gloss = kNaN;
  if (finalGlobalEvaluated_) {
    // The last round already evaluated this global model (finishClient never changes it).
    gacc = lastGlobalAcc_;
    gloss = lastGlobalLoss_;
  } else {
    evaluateGlobal(gacc, gloss);
  }
  sink.writeScalar("/summary/global_accuracy", gacc);
  sink.writeScalar("/summary/global_loss", gloss);

  sink.writeFloatArray("/model/global", global_, {static_cast<std::uint64_t>(global_.size())});
  std::vector<std::string> names2;
  std::vector<std::int64_t> offs, sizes;
  for (const auto& b : ctx.blocks) {
    names2.push_back(b.name);
    offs.push_back(b.offset);
    sizes.push_back(b.size);
  }
  sink.writeStrings("/model/layers/name", names2);
  sink.writeIntArray("/model/layers/offset", offs, {L});
  sink.writeIntArray("/model/layers/size", sizes, {L});
  if (cfg_.output.clientModels) {
    std::vector<float> rows;
    const int r = comm_.rank();
    rows.reserve(static_cast<std::size_t>(placement_.count(r)) * global_.size());
    std::vector<float> p(global_.size());
    for (int k = placement_.first(r); k < placement_.end(r); ++k) {
      alg_->loadEvalParams(ctx, k, global_, p.data());
      rows.insert(rows.end(), p.begin(), p.end());
    }
    sink.writeClientFloatRows("/model/clients", rows, global_.size());
  }
  sink.writeStrings("/sensitivity/layers", names2);
  sink.writeClientMatrix("/sensitivity/round0", sensRound0_, L);  // [K, L] also for a one-layer model
  sink.writeClientMatrix("/sensitivity/final", sensFinal_, L);
  if (!data_.vocabulary.empty()) sink.writeStrings("/data/vocabulary", data_.vocabulary);
  alg_->record(ctx, sink);
}

}  // namespace fedsilo
