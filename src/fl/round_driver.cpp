#include "fl/round_driver.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "core/timer.hpp"
#include "core/types.hpp"
#include "fl/personal_store.hpp"
#include "optim/lr_schedule.hpp"

namespace fedsilo {

namespace {

// Throws the NumericError of a diverged client if block `block` of `v` holds a NaN or Inf.
void requireFiniteBlock(const float* v, const LayerBlock& block, int client, int round, const char* what) {
  const float* p = v + block.offset;
  for (Index i = 0; i < block.size; ++i)
    if (!std::isfinite(p[i]))
      throw NumericError(fmt("client ", client, " round ", round, ": ", what, " of layer ", block.name, " contains ",
                             p[i], " (set fl.skip_diverged = true to drop such updates)"));
}

// Appended to the error of a client that diverged under client-level DP: the noise the global model
// carries is then the usual cause, which the trainer's train.lr hint does not name.
std::string clientDpDivergenceHint(const ExperimentConfig& cfg) {
  const int expected = cfg.fl.clientsPerRound > 0 ? std::min(cfg.fl.clientsPerRound, cfg.clients) : cfg.clients;
  return fmt("; under client-level DP each round adds noise of std ",
             cfg.privacy.noiseMultiplier * cfg.privacy.clip / expected,
             " (privacy.noise_multiplier x privacy.clip / expected clients per round) to every coordinate of the "
             "global model: a smaller privacy.clip, a server optimizer with a smaller fl.server_lr or more clients "
             "per round keep it finite");
}

}  // namespace

const RunHooks& noRunHooks() {
  static const RunHooks none;
  return none;
}

RoundDriver::RoundDriver(const RoundParts& parts)
    : p_(parts),
      lastFigures_(numLocal()),
      sensRound0_(static_cast<std::size_t>(numLocal()) * parts.model.blocks().size(), kNaN),
      sensFinal_(sensRound0_),
      selection_(parts.cfg.eval, parts.placement.clients(parts.comm.rank()),
                 parts.cfg.eval.select == EvalSelect::BestVal && parts.cfg.output.clientModels) {
  if (parts.cfg.fl.serverOptimizer.kind != ServerOptimizerKind::None)
    serverOptimizer_ = std::make_unique<ServerOptimizer>(parts.cfg.fl.serverOptimizer, parts.model.numParams());
  privacy_ = RoundPrivacy::make(p_.cfg, p_.comm, p_.placement, p_.clients, p_.ctx.blocks);
  robust_ = RobustRound::make(p_.cfg, p_.comm, p_.placement, p_.ctx.blocks, p_.data.train.numClasses);
  sim_ = std::make_unique<SimRound>(p_.cfg, p_.comm, p_.placement, p_.model.trainFlopsPerSample());
  compressed_ = CompressedUpload::make(p_.cfg, p_.comm, p_.placement, p_.ctx.blocks);
}

RoundDriver::~RoundDriver() = default;

RoundSummary RoundDriver::runRound(int round, RecordSink& sink) {
  Timer roundTimer;
  RoundSummary summary;
  summary.round = round;
  const ReductionLayout layout = layoutReduction(round);
  acc_.resize(layout.size());
  if (privacy_) privacy_->beginRound(round, layout.selected, layout.size());
  sim_->beginRound(round, roundPayload(layout));
  if (compressed_) compressed_->beginRound(p_.global);
  Timer trainTimer;
  runRankUpdate(round);
  const LocalRound local = trainLocalClients(round, layout);
  summary.trainSeconds = p_.comm.allreduceMax(trainTimer.seconds());
  const std::vector<double> blockWeightSum = serverStepAndBroadcast(round, layout, local);
  if (compressed_) {
    compressed_->endRound(round, layout.reduced, p_.global);
    sim_->chargeEncodedBytes(compressed_->roundBytes(), p_.cfg.compress.downlink);
  }
  summary.participants = countParticipants(local);
  sim_->endRound();
  summary.simSeconds = sim_->roundSeconds();
  summary.simTime = sim_->simTime();
  if (privacy_) summary.epsilon = privacy_->endRound(round);
  const std::vector<double> shares = participantShares(layout, local, blockWeightSum);
  ClientFigures figures(numLocal());
  evaluateRound(round, isEvaluationRound(p_.cfg, round), local, summary, figures);
  sim_->noteAccuracy(round, summary.evaluated, summary.globalAccuracy, summary.meanClientAccuracy);
  summary.seconds = p_.comm.allreduceMax(roundTimer.seconds());
  recordRound(sink, summary, figures, local, shares);
  roundSeconds_.push_back(summary.seconds);
  nextRound_ = round + 1;
  return summary;
}

RoundDriver::ReductionLayout RoundDriver::layoutReduction(int round) const {
  ReductionLayout layout;
  layout.numBlocks = p_.ctx.numBlocks();
  layout.selected = privacy_ && privacy_->selectsClients() ? privacy_->selectClients(round)
                                                           : p_.alg.selectClients(p_.ctx, round);
  layout.reduced = p_.alg.reducedBlocks(p_.ctx, round);
  FEDSILO_ASSERT(static_cast<int>(layout.reduced.size()) == layout.numBlocks);
  layout.offset.assign(static_cast<std::size_t>(layout.numBlocks), -1);
  for (int b = 0; b < layout.numBlocks; ++b)
    if (layout.reduced[b]) {
      layout.offset[b] = layout.vectorSize;
      layout.vectorSize += p_.ctx.blocks[b].size;
    }
  layout.numSums = p_.alg.sumsSize();
  layout.numPrivacySums = privacy_ ? privacy_->numSums() : 0;
  layout.payloadSize = p_.alg.payloadSize();
  return layout;
}

// What every client of the round exchanges (fl/payload_bytes.hpp).
RoundPayload RoundDriver::roundPayload(const ReductionLayout& layout) const {
  RoundPayload payload;
  payload.blocks = &p_.ctx.blocks;
  payload.reduced = layout.reduced;
  payload.sums = layout.numSums;
  payload.payloadValues = layout.payloadSize;
  payload.privacySums = layout.numPrivacySums;
  payload.serverState = p_.alg.serverState().size();
  if (p_.cfg.privacy.secureAggregation) {
    payload.secureClients = static_cast<int>(layout.selected.size());
    payload.secureWords = layout.size();
  }
  if (compressed_) {
    payload.codec = &compressed_->codec();
    payload.downlinkEncoded = p_.cfg.compress.downlink;
  }
  return payload;
}

void RoundDriver::runRankUpdate(int round) {
  if (!p_.alg.usesRankUpdate()) return;
  coordinated(p_.comm, [&] {
    RankContext rankContext{p_.ctx, round, p_.comm.rank(), p_.comm.size(),
                            [this](ExactSum& sums) { p_.comm.allreduceExact(sums); }};
    p_.alg.rankUpdate(rankContext);
  });
}

RoundDriver::LocalRound RoundDriver::trainLocalClients(int round, const ReductionLayout& layout) {
  LocalRound local(numLocal());
  const FlConfig& fl = p_.cfg.fl;
  startTrainingProgress(round, layout.selected);
  coordinated(p_.comm, [&] {
    for (int k : layout.selected) {
      if (!p_.ctx.isLocal(k)) continue;
      const std::int64_t samplesBefore = p_.trainer.samplesTrained();
      const bool droppedOut =  // a dropped-out client sends nothing
          fl.dropout > 0.0 && Rng(p_.cfg.seed, k, round, Purpose::ClientDropout).bernoulli(fl.dropout);
      if (!droppedOut) trainClient(k, round, layout, local);
      p_.ctx.announce().clientDone(p_.trainer.samplesTrained() - samplesBefore);
    }
  });
  return local;
}

// The training phase's work for the progress line: this rank's selected clients and every rank's
// (each rank knows every client's size, so this needs no communication).
void RoundDriver::startTrainingProgress(int round, const std::vector<int>& selected) const {
  PhaseSize mine, all;
  for (int k : selected) {
    const auto samples = static_cast<std::int64_t>(p_.clients[k].train.size());
    all.clients += 1;
    all.samples += samples;
    if (!p_.ctx.isLocal(k)) continue;
    mine.clients += 1;
    mine.samples += samples;
  }
  p_.ctx.announce().startPhase(round, RoundPhase::Training, mine, all);
}

void RoundDriver::trainClient(int client, int round, const ReductionLayout& layout, LocalRound& local) {
  const int slot = localIndex(client);
  p_.model.setParams(p_.global);
  p_.model.setRandomContext(p_.cfg.seed, client, round);
  ClientContext clientContext = clientContextFor(client, round);
  ClientUpdate update;
  if (privacy_) privacy_->beforeClient(client, round, p_.trainer);
  if (robust_) robust_->beforeClient(client, round, p_.trainer);
  const UpdateOutcome outcome = updateOrDrop(clientContext, layout, update);
  if (robust_) robust_->afterClient(p_.trainer);
  if (privacy_) privacy_->afterClient(p_.trainer);
  if (outcome != UpdateOutcome::Sent) {
    local.participated[slot] = outcome == UpdateOutcome::Diverged ? -1.0 : -2.0;
    return;
  }
  sendUpdate(client, round, layout, update);
  local.participated[slot] = 1.0;
  local.blockWeight[slot] = update.blockWeight;
  if (layout.payloadSize > 0) {
    local.payloadRows.push_back(client);
    local.payloadRows.insert(local.payloadRows.end(), update.payload.begin(), update.payload.end());
  }
  if (isFirst(round) || isLast(round)) recordSensitivity(client, round, local);
  if (p_.cfg.eval.point == EvalPoint::AfterLocal && isEvaluationRound(p_.cfg, round)) evaluateAfterLocal(client, round, local);
}

// The client's update, checked for NaN/Inf in what it sends and what it keeps, and put on the
// simulated clock. A diverged update is an error, or with fl.skip_diverged dropped; an update that
// misses fl.deadline_seconds is dropped. A dropped client's personal state is put back as it was
// before the round (the dropped round leaves no trace in it).
RoundDriver::UpdateOutcome RoundDriver::updateOrDrop(ClientContext& clientContext, const ReductionLayout& layout,
                                                     ClientUpdate& update) {
  const int client = clientContext.client.id;
  const bool skipDiverged = p_.cfg.fl.skipDiverged;
  const bool mayDrop = skipDiverged || sim_->hasDeadline();
  PersonalStore* personal = p_.alg.personalStore();
  std::optional<std::vector<float>> before;
  if (personal && mayDrop) before = personal->snapshot(client);
  OptimizerStateStore::Snapshot optimizerBefore;
  if (clientContext.optimizerStates && mayDrop) optimizerBefore = optimizerStates_.snapshot(client);
  const auto rollBack = [&] {
    if (personal) personal->restore(client, std::move(before));
    if (clientContext.optimizerStates) optimizerStates_.restore(client, std::move(optimizerBefore));
  };
  const std::int64_t samplesBefore = p_.trainer.samplesTrained();
  try {
    p_.alg.clientUpdate(clientContext, update);
    checkFinite(update, client, clientContext.round, layout);
  } catch (const NumericError& e) {
    if (!skipDiverged && p_.cfg.privacy.clientLevel()) throw NumericError(e.what() + clientDpDivergenceHint(p_.cfg));
    if (!skipDiverged) throw;
    rollBack();
    sim_->clientTrained(client, p_.trainer.samplesTrained() - samplesBefore, nullptr);
    p_.ctx.announce().rankWarning(fmt(e.what(), "; update dropped (fl.skip_diverged)"));
    return UpdateOutcome::Diverged;
  }
  if (sim_->clientTrained(client, p_.trainer.samplesTrained() - samplesBefore, &update.blockWeight))
    return UpdateOutcome::Sent;
  rollBack();
  return UpdateOutcome::MissedDeadline;
}

void RoundDriver::checkFinite(const ClientUpdate& update, int client, int round, const ReductionLayout& layout) const {
  const int L = layout.numBlocks;
  FEDSILO_ASSERT(static_cast<int>(update.blockWeight.size()) == L, "algorithm sent ", update.blockWeight.size(),
                 " block weights");
  FEDSILO_ASSERT(static_cast<int>(update.sums.size()) == layout.numSums &&
                 static_cast<int>(update.payload.size()) == layout.payloadSize);
  const float* sent = update.vector ? update.vector : p_.model.params();
  for (int b = 0; b < L; ++b)
    if (layout.reduced[b] && update.blockWeight[b] != 0.0)
      requireFiniteBlock(sent, p_.ctx.blocks[b], client, round, "update");
  // Every parameter the client keeps for later rounds (local layers too, which are never reduced).
  const PersonalStore* personal = p_.alg.personalStore();
  if (const std::vector<float>* kept = personal ? personal->find(client) : nullptr)
    for (int b = 0; b < L; ++b) requireFiniteBlock(kept->data(), p_.ctx.blocks[b], client, round, "personal state");
}

// Into the round's accumulator, through the privacy step when there is one (client-level DP's
// clipping and noise share, secure aggregation's masks) and the compression (after clipping: what the
// server decodes is what it reduces, keeps for a robust aggregator, or unmasks).
void RoundDriver::sendUpdate(int client, int round, const ReductionLayout& layout, ClientUpdate& update) {
  if (privacy_) privacy_->privatize(client, round, layout.reduced, p_.global, update);
  if (compressed_) compressed_->compress(client, round, layout.reduced, p_.global, p_.model.params(), update);
  if (robust_)
    robust_->keepUpdate(client, layout.reduced, update.blockWeight, update.vector ? update.vector : p_.model.params(),
                        p_.global);
  if (!privacy_) return accumulate(update, layout, acc_);
  accumulate(update, layout, privacy_->uploadTarget(acc_));
  privacy_->finishUpload(client, layout.privacySumsAt(), acc_);
}

void RoundDriver::accumulate(const ClientUpdate& update, const ReductionLayout& layout, ExactSum& into) {
  const float* sent = update.vector ? update.vector : p_.model.params();
  for (int b = 0; b < layout.numBlocks; ++b) {
    const double w = update.blockWeight[b];
    if (!layout.reduced[b] || w == 0.0) continue;
    const LayerBlock& block = p_.ctx.blocks[b];
    const auto at = static_cast<std::size_t>(layout.offset[b]);
    into.addScaled(at, sent + block.offset, static_cast<std::size_t>(block.size), w);
    into.add(layout.weightAt(b), w);
  }
  for (int s = 0; s < layout.numSums; ++s) into.add(layout.sumAt(s), update.sums[s]);
}

// Per-block sensitivity of the client after local training, in round 0 and the last round: kept for
// /sensitivity and gathered for the server step.
void RoundDriver::recordSensitivity(int client, int round, LocalRound& local) {
  const std::vector<double> perBlock =
      layerSensitivity(p_.model, p_.trainer, p_.clients[client].train, p_.cfg.train.batch, p_.cfg.seed, client, round,
                       p_.alg.sensitivityIncludesBias());
  const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(localIndex(client)) * p_.ctx.numBlocks();
  if (isFirst(round)) std::copy(perBlock.begin(), perBlock.end(), sensRound0_.begin() + at);
  if (isLast(round)) std::copy(perBlock.begin(), perBlock.end(), sensFinal_.begin() + at);
  local.sensitivityRows.push_back(client);
  local.sensitivityRows.insert(local.sensitivityRows.end(), perBlock.begin(), perBlock.end());
}

// Reduces and gathers the round's contributions to rank 0, runs the server step there, and
// broadcasts the global parameters, the per-block weight sums (returned) and the server state.
std::vector<double> RoundDriver::serverStepAndBroadcast(int round, const ReductionLayout& layout,
                                                        const LocalRound& local) {
  const Communicator& comm = p_.comm;
  comm.reduceExact(acc_, 0);
  if (privacy_) privacy_->afterReduction(acc_, layout.privacySumsAt());
  if (robust_) robust_->gather(round);
  const std::vector<double> payloads = comm.gatherv(local.payloadRows, 0);
  const bool sensitivityRound = isFirst(round) || isLast(round);
  const std::vector<double> sensitivity =
      sensitivityRound ? comm.gatherv(local.sensitivityRows, 0) : std::vector<double>{};
  std::vector<double> blockWeightSum(static_cast<std::size_t>(layout.numBlocks), 0.0);
  std::vector<double> state;
  coordinated(comm, [&] {
    if (!comm.isRoot()) return;
    ServerInput in = serverInput(round, layout, payloads, sensitivity);
    blockWeightSum = in.blockWeightSum;
    if (privacy_) privacy_->serverInput(round, acc_, p_.global, in);
    if (robust_) robust_->serverInput(round, p_.global, in, p_.ctx.announce());
    p_.alg.serverUpdate(p_.ctx, in, p_.global);
    for (float v : p_.global)
      if (!std::isfinite(v)) throw NumericError(fmt("round ", round, ": the aggregated global model contains ", v));
    state = p_.alg.serverState();
  });
  comm.bcast(p_.global.data(), p_.global.size(), 0);
  comm.bcast(blockWeightSum.data(), blockWeightSum.size(), 0);
  comm.bcast(state, 0);
  if (!comm.isRoot()) p_.alg.setServerState(state);
  if (robust_) robust_->endRound();
  return blockWeightSum;
}

namespace {

// The offsets of gathered rows of `width` values that each start with a client id, in client order:
// a gather delivers them rank by rank, and the server's sums must not depend on the placement.
std::vector<std::size_t> rowsByClient(const std::vector<double>& rows, std::size_t width) {
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < rows.size(); i += width) at.push_back(i);
  std::sort(at.begin(), at.end(), [&](std::size_t a, std::size_t b) { return rows[a] < rows[b]; });
  return at;
}

}  // namespace

// What the server step sees: the reduced sums, and the gathered rows split into client ids and values.
ServerInput RoundDriver::serverInput(int round, const ReductionLayout& layout, const std::vector<double>& payloads,
                                     const std::vector<double>& sensitivity) const {
  const int L = layout.numBlocks, G = layout.payloadSize;
  ServerInput in;
  in.round = round;
  in.acc = &acc_;
  in.accOffset = layout.offset;
  in.serverOptimizer = serverOptimizer_.get();
  for (int b = 0; b < L; ++b) in.blockWeightSum.push_back(acc_.value(layout.weightAt(b)));
  for (int s = 0; s < layout.numSums; ++s) in.sums.push_back(acc_.value(layout.sumAt(s)));
  for (std::size_t i : rowsByClient(payloads, static_cast<std::size_t>(G) + 1)) {
    in.payloadClients.push_back(static_cast<int>(payloads[i]));
    in.participants.push_back(static_cast<int>(payloads[i]));
    const auto row = payloads.begin() + static_cast<std::ptrdiff_t>(i) + 1;
    in.payloads.insert(in.payloads.end(), row, row + G);
  }
  for (std::size_t i : rowsByClient(sensitivity, static_cast<std::size_t>(L) + 1)) {
    in.sensitivityClients.push_back(static_cast<int>(sensitivity[i]));
    const auto row = sensitivity.begin() + static_cast<std::ptrdiff_t>(i) + 1;
    in.sensitivity.insert(in.sensitivity.end(), row, row + L);
  }
  return in;
}

int RoundDriver::countParticipants(const LocalRound& local) const {
  const auto sent = std::count(local.participated.begin(), local.participated.end(), 1.0);
  return static_cast<int>(p_.comm.allreduceSum<std::int64_t>(static_cast<std::int64_t>(sent)));
}

// Each participant's share of the aggregate: its block weights, parameter-weighted over the reduced
// blocks, relative to the sum over all participants.
std::vector<double> RoundDriver::participantShares(const ReductionLayout& layout, const LocalRound& local,
                                                   const std::vector<double>& blockWeightSum) const {
  const auto blockSize = [&](int b) { return static_cast<double>(p_.ctx.blocks[b].size); };
  double denom = 0.0;
  for (int b = 0; b < layout.numBlocks; ++b)
    if (layout.reduced[b]) denom += blockWeightSum[b] * blockSize(b);
  std::vector<double> shares(local.blockWeight.size(), 0.0);
  for (std::size_t i = 0; i < shares.size(); ++i) {
    if (local.blockWeight[i].empty() || denom <= 0.0) continue;
    double num = 0.0;
    for (int b = 0; b < layout.numBlocks; ++b)
      if (layout.reduced[b]) num += local.blockWeight[i][b] * blockSize(b);
    shares[i] = num / denom;
  }
  return shares;
}

// Every round appends one row; the evaluation entries of a round that was not evaluated are NaN.
void RoundDriver::recordRound(RecordSink& sink, const RoundSummary& summary, const ClientFigures& figures,
                              const LocalRound& local, const std::vector<double>& shares) const {
  appendEvaluationRow(sink, summary, figures);
  sink.appendRoundClients("weight", shares);
  sink.appendRoundClients("participated", local.participated);
  sink.appendRoundScalar("seconds", summary.seconds);
  sink.appendRoundScalar("train_seconds", summary.trainSeconds);
  if (robust_) robust_->recordRound(sink);
  sim_->recordRound(sink);
  if (compressed_) compressed_->recordRound(sink);
  sink.endRound();
}

void RoundDriver::finishTraining() {
  const int rounds = p_.cfg.rounds, r = p_.comm.rank();
  coordinated(p_.comm, [&] {
    for (int k : p_.placement.clients(r)) {
      p_.model.setParams(p_.global);
      p_.model.setRandomContext(p_.cfg.seed, k, rounds);
      ClientContext clientContext = clientContextFor(k, rounds);
      p_.alg.finishClient(clientContext);
    }
    // The end-of-training evaluation: a candidate of the last round (fl/eval_selection.hpp).
    const bool candidate = p_.cfg.eval.point == EvalPoint::AfterAggregation || p_.alg.changesModelsAtEnd();
    lastFigures_ = evaluateClients(rounds, nullptr, candidate ? rounds - 1 : -1);
  });
}

// What client `client` trains with in `round` (round = rounds: the end-of-training hooks): the
// round's learning rate (train.lr_schedule) and, with train.optimizer_state = keep, its own
// optimizer states.
ClientContext RoundDriver::clientContextFor(int client, int round) {
  ClientContext c{p_.ctx, p_.clients[client], round, p_.model, p_.trainer, p_.global};
  c.train = p_.hooks.training(round, trainingForRound(p_.cfg.train, round, p_.cfg.rounds));
  if (p_.cfg.train.optimizerState == OptimizerStateMode::Keep) c.optimizerStates = &optimizerStates_;
  return c;
}

GlobalFigures RoundDriver::finalGlobal() { return finalGlobalEvaluated_ ? lastGlobal_ : evaluateGlobal(); }

void RoundDriver::recordPrivacy(RecordSink& sink) const {
  if (privacy_) privacy_->record(sink);
}

void RoundDriver::recordRobust(RecordSink& sink) const {
  if (robust_) robust_->record(sink);
}

void RoundDriver::recordCompression(RecordSink& sink) const {
  if (compressed_) compressed_->record(sink);
}

void RoundDriver::checkpointProtocolState(StateArchive& ar) {
  selection_.checkpoint(ar);
  if (robust_) robust_->checkpoint(ar);
  if (!serverOptimizer_) return;
  std::vector<double> state = ar.saving() ? serverOptimizer_->state() : std::vector<double>{};
  if (ar.saving()) p_.comm.bcast(state, 0);  // the state lives on rank 0; the archive stores replicated arrays
  ar.doubles("driver/server_optimizer", state);
  if (!ar.saving()) serverOptimizer_->setState(state);
}

void RoundDriver::checkpoint(StateArchive& ar) {
  checkpointProtocolState(ar);
  if (privacy_) privacy_->checkpoint(ar);
  sim_->checkpoint(ar);
  if (compressed_) compressed_->checkpoint(ar);
  const std::vector<int>& mine = p_.placement.clients(p_.comm.rank());
  const std::size_t L = p_.model.blocks().size();
  const auto row = [&](const std::vector<double>& table, int i) {
    const auto at = table.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(i) * L);
    return std::vector<double>(at, at + static_cast<std::ptrdiff_t>(L));
  };
  std::vector<double> scalars{static_cast<double>(nextRound_), lastGlobal_.accuracy, everEvaluated_ ? 1.0 : 0.0};
  std::unordered_map<int, std::vector<double>> figures, sens0, sensFinal;
  if (ar.saving())
    for (int i = 0; i < numLocal(); ++i) {
      const int k = mine[static_cast<std::size_t>(i)];
      figures[k] = {lastFigures_.accuracy[i], lastFigures_.f1[i], lastFigures_.loss[i]};
      sens0[k] = row(sensRound0_, i);
      sensFinal[k] = row(sensFinal_, i);
    }
  ar.doubles("driver/scalars", scalars);
  ar.floats("driver/global", p_.global);
  ar.doubles("driver/round_seconds", roundSeconds_);
  ar.clientDoubles("driver/client_figures", figures);
  ar.clientDoubles("driver/sensitivity_round0", sens0);
  ar.clientDoubles("driver/sensitivity_final", sensFinal);
  if (p_.cfg.train.optimizerState == OptimizerStateMode::Keep) optimizerStates_.checkpoint(ar, "driver/optimizer");
  if (ar.saving()) return;
  FEDSILO_ASSERT(scalars.size() == 3 && p_.global.size() == static_cast<std::size_t>(p_.model.numParams()),
                 "checkpoint driver state does not fit this model");
  nextRound_ = static_cast<int>(scalars[0]);
  lastGlobal_.accuracy = scalars[1];
  everEvaluated_ = scalars[2] != 0.0;
  for (int i = 0; i < numLocal(); ++i) {
    const int k = mine[static_cast<std::size_t>(i)];
    const auto f = figures.find(k), s0 = sens0.find(k), sf = sensFinal.find(k);
    FEDSILO_ASSERT(f != figures.end() && f->second.size() == 3 && s0 != sens0.end() && s0->second.size() == L &&
                       sf != sensFinal.end() && sf->second.size() == L,
                   "checkpoint lacks the driver state of client ", k);
    lastFigures_.accuracy[i] = f->second[0];
    lastFigures_.f1[i] = f->second[1];
    lastFigures_.loss[i] = f->second[2];
    const auto at = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(i) * L);
    std::copy(s0->second.begin(), s0->second.end(), sensRound0_.begin() + at);
    std::copy(sf->second.begin(), sf->second.end(), sensFinal_.begin() + at);
  }
}

}  // namespace fedsilo
