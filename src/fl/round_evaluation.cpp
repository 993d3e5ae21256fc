// RoundDriver's evaluation step: which rounds are evaluated, each local client's model on its test and
// validation splits (after local training or after the server step, eval.point), the global model on
// the shared test set, and the round's mean and worst-10% client accuracy. The rest of the round is in
// round_driver.cpp.
#include <algorithm>
#include <optional>

#include "core/types.hpp"
#include "fl/fairness.hpp"
#include "fl/personal_store.hpp"
#include "fl/round_driver.hpp"

namespace fedsilo {

namespace {

// An algorithm's own evaluation of a client (Algorithm::evaluateClient): its test split only; no
// validation figures (NaN).
ClientEvaluation testOnly(const EvalStats& test) {
  ClientEvaluation e;
  e.testAccuracy = test.accuracy();
  e.testF1 = test.macroF1();
  e.testLoss = test.meanLoss();
  return e;
}
}  // namespace

bool isEvaluationRound(const ExperimentConfig& cfg, int round) {
  return round == cfg.rounds - 1 || (cfg.eval.every > 0 && round % cfg.eval.every == 0);
}

ClientFigures::ClientFigures(int localClients)
    : accuracy(localClients, kNaN),
      f1(localClients, kNaN),
      loss(localClients, kNaN),
      valAccuracy(localClients, kNaN),
      valLoss(localClients, kNaN) {}

void ClientFigures::set(int i, const ClientEvaluation& e) {
  const auto at = static_cast<std::size_t>(i);
  accuracy[at] = e.testAccuracy;
  f1[at] = e.testF1;
  loss[at] = e.testLoss;
  valAccuracy[at] = e.valAccuracy;
  valLoss[at] = e.valLoss;
}

void appendEvaluationRow(RecordSink& sink, const RoundSummary& summary, const ClientFigures& figures) {
  sink.appendRoundInt("round", summary.round);
  sink.appendRoundScalar("global_accuracy", summary.globalAccuracy);
  sink.appendRoundScalar("global_loss", summary.globalLoss);
  sink.appendRoundClients("client_accuracy", figures.accuracy);
  sink.appendRoundClients("client_f1", figures.f1);
  sink.appendRoundClients("client_loss", figures.loss);
  sink.appendRoundClients("client_val_accuracy", figures.valAccuracy);
  sink.appendRoundClients("client_val_loss", figures.valLoss);
}

ClientEvaluation ClientFigures::at(int i) const {
  const auto at = static_cast<std::size_t>(i);
  ClientEvaluation e;
  e.testAccuracy = accuracy[at];
  e.testF1 = f1[at];
  e.testLoss = loss[at];
  e.valAccuracy = valAccuracy[at];
  e.valLoss = valLoss[at];
  return e;
}

// eval.point = after_local: the client's model right after its local training, before the server step
// (its personal-store entry when the algorithm keeps one, which is what it trained: Ditto's and
// pFedMe's personal models, PLayer-FL's whole model; else the working model). Called last in
// trainClient: the working model may be overwritten.
void RoundDriver::evaluateAfterLocal(int client, int round, LocalRound& local) {
  const int slot = localIndex(client);
  const PersonalStore* personal = p_.alg.personalStore();
  if (const std::vector<float>* kept = personal ? personal->find(client) : nullptr) p_.model.setParams(*kept);
  const ClientEvaluation e = evaluateLoadedModel(p_.clients[client]);
  local.afterLocal.set(slot, e);
  local.evaluatedAfterLocal[static_cast<std::size_t>(slot)] = 1;
  selection_.offer(slot, round, e, p_.model.params(), static_cast<std::size_t>(p_.model.numParams()));
}

// The evaluation phase's work for the progress line: every client's test split.
void RoundDriver::startEvaluationProgress(int round) const {
  PhaseSize mine, all;
  for (const ClientData& c : p_.clients) {
    all.clients += 1;
    all.samples += static_cast<std::int64_t>(c.test.size());
    if (!p_.ctx.isLocal(c.id)) continue;
    mine.clients += 1;
    mine.samples += static_cast<std::int64_t>(c.test.size());
  }
  p_.ctx.announce().startPhase(round, RoundPhase::Evaluating, mine, all);
}

ClientFigures RoundDriver::evaluateClients(int round, const std::vector<char>* done, int offerRound) {
  const int r = p_.comm.rank();
  Model& model = p_.model;
  ClientFigures figures(numLocal());
  startEvaluationProgress(round);
  const std::vector<float> saved(model.params(), model.params() + model.numParams());
  bool holdsGlobal = false;  // the model holds the global parameters (loaded once for all such clients)
  for (int k : p_.placement.clients(r)) {
    const int i = localIndex(k);
    const ClientData& c = p_.clients[k];
    if (done && (*done)[static_cast<std::size_t>(i)]) continue;
    ClientContext clientContext{p_.ctx, c, round, model, p_.trainer, p_.global};
    std::optional<EvalStats> own = c.test.empty() ? std::nullopt : p_.alg.evaluateClient(clientContext);
    const bool keep = offerRound >= 0 && selection_.keepsParams() && !own;
    if (own || (c.test.empty() && c.val.empty() && !keep)) {
      holdsGlobal = holdsGlobal && !own;  // the algorithm's own evaluation may have used the model
    } else if (p_.alg.evalParams(p_.ctx, k, p_.global, model.params())) {
      holdsGlobal = false;
    } else if (!holdsGlobal) {
      model.setParams(p_.global);
      holdsGlobal = true;
    }
    const ClientEvaluation e = own ? testOnly(*own) : evaluateLoadedModel(c);
    figures.set(i, e);
    if (offerRound >= 0)
      selection_.offer(i, offerRound, e, own ? nullptr : model.params(), static_cast<std::size_t>(model.numParams()));
    p_.ctx.announce().clientDone(static_cast<std::int64_t>(c.test.size()));
  }
  model.setParams(saved);
  return figures;
}

// The model in the working model on the client's test split and on its validation split.
ClientEvaluation RoundDriver::evaluateLoadedModel(const ClientData& c) {
  const Dataset& ds = c.testFromTestSet ? p_.data.test : p_.data.train;
  const EvalStats test = p_.trainer.evaluate(p_.model, ds, c.test, p_.cfg.eval.batch);
  const EvalStats val = p_.trainer.evaluate(p_.model, p_.data.train, c.val, p_.cfg.eval.batch);
  ClientEvaluation e;
  e.testAccuracy = test.accuracy();
  e.testF1 = test.macroF1();
  e.testLoss = test.meanLoss();
  e.valAccuracy = val.accuracy();
  e.valLoss = val.meanLoss();
  return e;
}

GlobalFigures RoundDriver::evaluateGlobal() {
  const Dataset& test = p_.data.test;
  if (!p_.alg.hasGlobalModel() || test.size() == 0) return {kNaN, kNaN};
  p_.model.setParams(p_.global);
  const Index n = test.size(), chunk = p_.cfg.eval.batch;
  std::int64_t correct = 0;
  ExactSum lossSum(1);
  IndexList samples;
  for (Index start = 0, chunkIndex = 0; start < n; start += chunk, ++chunkIndex) {
    if (chunkIndex % p_.comm.size() != p_.comm.rank()) continue;
    samples.clear();
    for (Index i = start; i < std::min(n, start + chunk); ++i) samples.push_back(i);
    const EvalStats stats = p_.trainer.evaluate(p_.model, test, samples, p_.cfg.eval.batch);
    correct += stats.correct;
    lossSum.add(0, stats.lossSum);
  }
  correct = p_.comm.allreduceSum<std::int64_t>(correct);
  p_.comm.allreduceExact(lossSum);
  return {static_cast<double>(correct) / static_cast<double>(n), lossSum.value(0) / static_cast<double>(n)};
}

// The global model on the test set in an evaluated round, or with eval.global = end in the last round
// only (a test-set pass can cost a third of a protocol's round, and its figures are not the protocol's).
void RoundDriver::evaluateGlobalIfDue(int round, RoundSummary& summary) {
  if (p_.cfg.eval.global == GlobalEvaluation::End && !isLast(round)) return;
  lastGlobal_ = evaluateGlobal();
  summary.globalAccuracy = lastGlobal_.accuracy;
  summary.globalLoss = lastGlobal_.loss;
  finalGlobalEvaluated_ = isLast(round);
}

void RoundDriver::evaluateAfterAggregation(int round, bool due, RoundSummary& summary, ClientFigures& figures) {
  evaluateRound(round, due, LocalRound(numLocal()), summary, figures);
}

// When due (eval.every, and always the last round): every local client (those evaluated after their
// local training, eval.point = after_local, keep those figures), the global model (eval.global), and the mean and
// worst-10% client accuracy (computed on rank 0, broadcast). Otherwise the figures stay NaN.
void RoundDriver::evaluateRound(int round, bool due, const LocalRound& local, RoundSummary& summary,
                                ClientFigures& figures) {
  summary.evaluated = due;
  summary.globalAccuracy = summary.globalLoss = summary.meanClientAccuracy = summary.worst10 = kNaN;
  if (!summary.evaluated) return;
  coordinated(p_.comm, [&] {
    figures = evaluateClients(round, &local.evaluatedAfterLocal, round);
    for (int i = 0; i < numLocal(); ++i)
      if (local.evaluatedAfterLocal[static_cast<std::size_t>(i)]) figures.set(i, local.afterLocal.at(i));
    lastFigures_ = figures;
  });
  evaluateGlobalIfDue(round, summary);
  everEvaluated_ = true;
  const std::vector<double> all = p_.placement.toClientOrder(p_.comm.gatherv(figures.accuracy, 0), 1);
  double meanAccuracy = 0.0, worst10 = 0.0;
  if (p_.comm.isRoot()) {
    meanAccuracy = mean(all);
    worst10 = worstFraction(all);
  }
  p_.comm.bcast(&meanAccuracy, 1, 0);
  p_.comm.bcast(&worst10, 1, 0);
  summary.meanClientAccuracy = meanAccuracy;
  summary.worst10 = worst10;
}

}  // namespace fedsilo
