#include "fl/algorithms/alpha_fedavg.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/types.hpp"
#include "fl/aggregation.hpp"
#include "fl/state_packer.hpp"

namespace fedsilo {

std::vector<OptionSpec> alphaFedAvgOptions() {
  return {
      {"alpha_fedavg.alpha", "auto",
       "alpha of the alpha-fair weights p_k ~ a_k^(1/alpha-1) (> 0; 1 = uniform), or auto: chosen by the paper's "
       "Algorithm 1 so that E(alpha) = E_T"},
      {"alpha_fedavg.efficiency_target", "",
       "E_T for alpha = auto, in (0, 1]; empty: the sample-weighted mean of the accuracies the search uses"},
      {"alpha_fedavg.reference", "",
       "FedAvg results file whose /summary/client_accuracy and /clients/num_train give the search's accuracies and "
       "E_T (resolved into reference_accuracy and efficiency_target at start-up)"},
      {"alpha_fedavg.reference_accuracy", "",
       "comma list of a FedAvg reference's final per-client accuracies: alpha = auto searches alpha on these before "
       "training (the paper's procedure); empty: the server searches at search_round"},
      {"alpha_fedavg.search_round", "1",
       "without a reference: the server searches alpha at the end of this round from that round's reports and uses it "
       "from the next round (earlier rounds weight by n_k)"},
      {"alpha_fedavg.weighted", "false", "sample-weighted variant p_k ~ n_k^(1/alpha) a_k^(1/alpha-1) (unconfirmed)"},
      {"alpha_fedavg.alpha_max", "5",
       "alpha used when every alpha meets E_T (target below E(inf), the harmonic mean of the accuracies)"},
      {"alpha_fedavg.accuracy_floor", "1e-6",
       "reported accuracies are clamped to [accuracy_floor, 1] before the weights and the alpha search (the paper's "
       "clamp is not known; at 1e-6 one report of 0 can take almost all the weight for alpha > 1)"},
      {"alpha_fedavg.verify_samples", "0",
       "accuracy-report check (section 3.4): samples of each client's val split shared with the server (0: off)"},
      {"alpha_fedavg.verify_tolerance", "0.2", "a report further than this from the server's check is a strike"},
      {"alpha_fedavg.verify_strikes", "3", "strikes after which a client is excluded from aggregation"},
      {"alpha_fedavg.liars", "", "client ids that misreport their accuracy (to exercise the check)"},
      {"alpha_fedavg.liar_boost", "0.3",
       "what liars add to their accuracy, in [-1, 1] (result clamped to [0, 1]; negative: the selfish direction "
       "for alpha > 1)"},
  };
}

AlphaFedAvgOptions AlphaFedAvgOptions::parse(const ExperimentConfig& cfg) {
  const OptionValues& v = cfg.algo;
  AlphaFedAvgOptions o;
  const std::string a = trim(v.raw("alpha_fedavg.alpha"));
  o.autoAlpha = a == "auto";
  if (!o.autoAlpha) {
    o.alpha = v.getDouble("alpha_fedavg.alpha", 0.0, 1e6);
    if (!(o.alpha > 0.0)) throw ConfigError(fmt("alpha_fedavg.alpha = ", a, ": expected a number > 0 or auto"));
  }
  if (!trim(v.raw("alpha_fedavg.efficiency_target")).empty()) {
    o.efficiencyTarget = v.getDouble("alpha_fedavg.efficiency_target", 0.0, 1.0);
    if (!(o.efficiencyTarget > 0.0))
      throw ConfigError(fmt("alpha_fedavg.efficiency_target = ", v.raw("alpha_fedavg.efficiency_target"),
                            ": expected a value in (0, 1]"));
  }
  o.reference = trim(v.raw("alpha_fedavg.reference"));
  const std::string ra = trim(v.raw("alpha_fedavg.reference_accuracy"));
  if (!ra.empty()) {
    o.referenceAccuracy = parseDoubleList(ra, "alpha_fedavg.reference_accuracy");
    for (double x : o.referenceAccuracy)
      if (!(x >= 0.0 && x <= 1.0) && !std::isnan(x))
        throw ConfigError(fmt("alpha_fedavg.reference_accuracy = ", ra, ": accuracies must be in [0, 1] (", x, ")"));
  }
  if (!o.reference.empty() && o.referenceAccuracy.empty())
    throw ConfigError(fmt("alpha_fedavg.reference = ", o.reference,
                          ": the reference file was not resolved into alpha_fedavg.reference_accuracy (the start-up "
                          "wiring calls resolveAlphaFedAvgReference); give alpha_fedavg.reference_accuracy and "
                          "alpha_fedavg.efficiency_target directly"));
  o.searchRound = static_cast<int>(v.getInt("alpha_fedavg.search_round", 1, 100000000));
  o.weighted = v.getBool("alpha_fedavg.weighted");
  o.alphaMax = v.getDouble("alpha_fedavg.alpha_max", 1.0, 1e6);
  // One range check with one message (getDouble's own range would say [1e-06, 1], admitting 1).
  o.accuracyFloor = v.getDouble("alpha_fedavg.accuracy_floor", -1e300, 1e300);
  if (!(o.accuracyFloor >= kAccuracyFloor && o.accuracyFloor < 1.0))
    throw ConfigError(
        fmt("alpha_fedavg.accuracy_floor = ", v.raw("alpha_fedavg.accuracy_floor"), ": expected a value in [1e-6, 1)"));
  o.verifySamples = static_cast<int>(v.getInt("alpha_fedavg.verify_samples", 0, 100000000));
  o.verifyTolerance = v.getDouble("alpha_fedavg.verify_tolerance", 0.0, 1.0);
  o.verifyStrikes = static_cast<int>(v.getInt("alpha_fedavg.verify_strikes", 1, 100000000));
  o.liars = v.getIntList("alpha_fedavg.liars", 0, cfg.clients - 1);
  o.liarBoost = v.getDouble("alpha_fedavg.liar_boost", -1.0, 1.0);
  return o;
}

void AlphaFedAvg::setup(const FlContext& ctx, std::vector<float>& global) {
  (void)global;
  K_ = static_cast<int>(ctx.clients.size());
  numTrain_.resize(static_cast<std::size_t>(K_));
  for (int k = 0; k < K_; ++k) {
    numTrain_[k] = static_cast<double>(ctx.clients[k].numTrain());
    if (ctx.clients[k].test.empty())
      throw ConfigError(fmt("algorithm = alpha_fedavg: client ", k,
                            " has no test split to report an accuracy on (data.split test fraction ",
                            ctx.cfg.data.split[2], "); use a positive test fraction or fewer clients"));
  }
  excluded_.assign(static_cast<std::size_t>(K_), 0);
  strikes_.assign(static_cast<std::size_t>(K_), 0);
  reports_.clear();
  checks_.clear();
  if (!opt_.autoAlpha) {
    alphaKnown_ = true;
    alpha_ = opt_.alpha;
  } else if (!opt_.referenceAccuracy.empty()) {
    // The paper's procedure (section 3.3): E_T = Σ_k (n_k/n) a_k^FedAvg and Algorithm 1 on the FedAvg
    // model's final accuracies, before training.
    const std::vector<double>& ref = opt_.referenceAccuracy;
    const bool sameClients = static_cast<int>(ref.size()) == K_;
    double target = opt_.efficiencyTarget;
    if (target < 0.0) {
      if (!sameClients)
        throw ConfigError(fmt("alpha_fedavg.reference_accuracy has ", ref.size(), " values for ", K_,
                              " clients: give alpha_fedavg.efficiency_target too"));
      target = efficiency(ref, numTrain_);
    }
    if (opt_.weighted && !sameClients)
      throw ConfigError(
          fmt("alpha_fedavg.weighted = true needs one reference accuracy per client (", K_, "), got ", ref.size()));
    runSearch(ctx.announce(), ref, opt_.weighted ? numTrain_ : std::vector<double>{}, target);
    searchedAt_ = -2;
    ctx.announce().decision(fmt("alpha_fedavg: alpha = ", alpha_, " before training, from the reference accuracies (",
                                search_.describe(), ")"));
  }
  if (opt_.verifySamples > 0 && ctx.rank == 0) {
    // The server's own model for the report check (the driver's working model belongs to the clients).
    verifyModel_ = buildModel<float>(ctx.cfg.model, ctx.input);
    verifyModel_->reserve(ctx.cfg.eval.batch);
    verifyTrainer_ = std::make_unique<LocalTrainer>(ctx.data.train, ctx.cfg.eval.batch);
    verifyIdx_.assign(static_cast<std::size_t>(K_), {});
    for (int k = 0; k < K_; ++k) {
      IndexList pool = ctx.clients[k].val;
      Rng rng(ctx.cfg.seed, k, -1, Purpose::Verify);
      rng.shuffle(pool);
      pool.resize(std::min<std::size_t>(pool.size(), static_cast<std::size_t>(opt_.verifySamples)));
      std::sort(pool.begin(), pool.end());
      verifyIdx_[k] = std::move(pool);
    }
  }
  state_ = encodeState(std::vector<double>(static_cast<std::size_t>(K_), kNaN),
                       std::vector<double>(static_cast<std::size_t>(K_), kNaN));
}

void AlphaFedAvg::runSearch(Announcer& say, const std::vector<double>& reported, const std::vector<double>& w,
                            double target) {
  std::vector<double> acc(reported);
  for (double& a : acc)
    if (std::isfinite(a)) a = std::max(a, opt_.accuracyFloor);
  search_ = searchAlpha(acc, target, w);
  target_ = target;
  switch (search_.outcome) {
    case AlphaSearchOutcome::Converged:
      alpha_ = search_.alpha;
      break;
    case AlphaSearchOutcome::BelowRange:
      // Every α satisfies E(α) >= E_T and J grows with α: the constrained optimum is unbounded.
      alpha_ = opt_.alphaMax;
      search_.alpha = alpha_;
      search_.efficiency = alphaEfficiency(acc, alpha_, w);
      say.warning(fmt("alpha_fedavg: ", search_.describe(), "; every alpha meets the target, using alpha_max = ",
                      alpha_));
      break;
    case AlphaSearchOutcome::AboveRange:
      throw ConfigError(fmt("alpha_fedavg: the efficiency target E_T = ", target, " is unreachable by any alpha > 0: ",
                            search_.describe(), "; lower alpha_fedavg.efficiency_target or fix alpha_fedavg.alpha"));
    case AlphaSearchOutcome::NotConverged: {
      // Only the weighted variant (E need not be monotone): take the closest iterate.
      auto best = std::min_element(search_.trace.begin(), search_.trace.end(), [&](const auto& x, const auto& y) {
        return std::fabs(x.second - target) < std::fabs(y.second - target);
      });
      alpha_ = best != search_.trace.end() ? best->first : 1.0;
      say.warning(fmt("alpha_fedavg: ", search_.describe(), "; using the closest iterate alpha = ", alpha_));
      break;
    }
    case AlphaSearchOutcome::NoData:
      return;  // nothing reported: try again next round
  }
  alphaKnown_ = true;
}

double AlphaFedAvg::clientWeight(int k, int round, double reported) const {
  if (excluded_[k]) return 0.0;
  if (round == 0 || !alphaKnown_) return numTrain_[k];  // FedAvg until α is known
  // a_k^(1/α-1) (eq. 6, unnormalised) or n_k^(1/α) a_k^(1/α-1); the reduction's Σ_k w_k normalises.
  const double beta = 1.0 / alpha_;
  double w = alphaFairWeight(std::max(reported, opt_.accuracyFloor), alpha_);
  if (opt_.weighted) w *= std::pow(numTrain_[k], beta);
  if (!std::isfinite(w))
    throw NumericError(fmt("alpha_fedavg: client ", k, " round ", round, ": weight ", w, " for accuracy ", reported,
                           " at alpha = ", alpha_));
  return w;
}

void AlphaFedAvg::clientUpdate(ClientContext& c, ClientUpdate& out) {
  // 1. The report: the current global model (c.model holds w_t on entry) on the client's test split.
  double a = c.testAccuracy(c.model, c.trainer);
  if (std::find(opt_.liars.begin(), opt_.liars.end(), c.client.id) != opt_.liars.end())
    a = std::min(1.0, std::max(0.0, a + opt_.liarBoost));
  // 2. Local training with the shared loop, 3. the model with the α-fair block weight.
  trainAndSend(c, out);
  out.blockWeight.assign(c.fl.blocks.size(), clientWeight(c.client.id, c.round, a));
  out.payload = {a};
}

void AlphaFedAvg::serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  std::vector<double> reports(static_cast<std::size_t>(K_), kNaN), checks(static_cast<std::size_t>(K_), kNaN);
  for (std::size_t i = 0; i < in.payloadClients.size(); ++i) reports[in.payloadClients[i]] = in.payloads[i];
  // Section 3.4: the server evaluates w_t (still the round's start model here) on each participant's
  // shared sample; |report - check| > λ_g is a strike; T_g strikes exclude the client.
  if (verifyModel_) {
    std::memcpy(verifyModel_->params(), global.data(), global.size() * sizeof(float));
    for (int k : in.payloadClients) {
      if (verifyIdx_[k].empty()) continue;
      checks[k] = verifyTrainer_->evaluate(*verifyModel_, ctx.data.train, verifyIdx_[k], ctx.cfg.eval.batch).accuracy();
      if (std::fabs(reports[k] - checks[k]) <= opt_.verifyTolerance) continue;
      if (++strikes_[k] < opt_.verifyStrikes || excluded_[k]) continue;
      excluded_[k] = 1;
      ctx.announce().decision(fmt("alpha_fedavg: round ", in.round, ": client ", k, " excluded from aggregation (",
                                  strikes_[k], " strikes; reported accuracy ", reports[k], ", the server's check ",
                                  checks[k], ", tolerance ", opt_.verifyTolerance, ")"));
    }
  }
  // The in-run α search ([I]): the reports of this round's trusted participants, used from the next round.
  if (opt_.autoAlpha && !alphaKnown_ && in.round >= opt_.searchRound) {
    std::vector<double> acc, n;
    for (int k : in.payloadClients)
      if (!excluded_[k] && std::isfinite(reports[k])) {
        acc.push_back(reports[k]);
        n.push_back(numTrain_[k]);
      }
    const double target = opt_.efficiencyTarget >= 0.0 ? opt_.efficiencyTarget : efficiency(acc, n);
    runSearch(ctx.announce(), acc, opt_.weighted ? n : std::vector<double>{}, target);
    if (alphaKnown_) {
      searchedAt_ = in.round;
      ctx.announce().decision(fmt("alpha_fedavg: round ", in.round, ": alpha = ", alpha_, ", used from round ",
                                  in.round + 1, " (", search_.describe(), ")"));
    }
  }
  applyWeightedMean(in, ctx.blocks, global);
  state_ = encodeState(reports, checks);
  applyState(state_, true);
}

std::vector<double> AlphaFedAvg::encodeState(const std::vector<double>& reports,
                                             const std::vector<double>& checks) const {
  StatePacker p;
  p.scalar(alphaKnown_ ? 1.0 : 0.0);
  p.scalar(alpha_);
  p.scalar(target_);
  p.scalar(searchedAt_);
  p.scalar(static_cast<double>(search_.outcome));
  p.scalar(search_.converged ? 1.0 : 0.0);
  p.scalar(search_.newtonSteps);
  p.scalar(search_.bisectionSteps);
  p.scalar(search_.efficiency);
  p.scalar(search_.rangeLow);
  p.scalar(search_.rangeHigh);
  std::vector<double> trace;
  for (const auto& [a, e] : search_.trace) trace.insert(trace.end(), {a, e});
  p.doubles(trace);
  p.ints(excluded_);
  p.ints(strikes_);
  p.doubles(reports);
  p.doubles(checks);
  return p.take();
}

void AlphaFedAvg::applyState(const std::vector<double>& s, bool append) {
  StateReader r(s);
  alphaKnown_ = r.scalar() != 0.0;
  alpha_ = r.scalar();
  target_ = r.scalar();
  searchedAt_ = r.integer();
  search_.outcome = static_cast<AlphaSearchOutcome>(r.integer());
  search_.converged = r.scalar() != 0.0;
  search_.newtonSteps = r.integer();
  search_.bisectionSteps = r.integer();
  search_.efficiency = r.scalar();
  search_.rangeLow = r.scalar();
  search_.rangeHigh = r.scalar();
  search_.target = target_;
  search_.alpha = alpha_;
  const std::vector<double> trace = r.doubles();
  search_.trace.clear();
  for (std::size_t i = 0; i + 1 < trace.size(); i += 2) search_.trace.emplace_back(trace[i], trace[i + 1]);
  excluded_ = r.ints();
  strikes_ = r.ints();
  std::vector<double> reports = r.doubles(), checks = r.doubles();
  FEDSILO_ASSERT(r.done() && excluded_.size() == static_cast<std::size_t>(K_) && reports.size() == excluded_.size(),
                 "alpha_fedavg state of ", s.size(), " values does not fit ", K_, " clients");
  if (append) {
    reports_.push_back(std::move(reports));
    checks_.push_back(std::move(checks));
  }
  state_ = s;
}

void AlphaFedAvg::checkpoint(StateArchive& ar) {
  Algorithm::checkpoint(ar);  // (setServerState appends a round that the histories below replace)
  std::vector<double> reports = flattenRows(reports_), checks = flattenRows(checks_);
  ar.doubles("alpha_fedavg_reports", reports);
  ar.doubles("alpha_fedavg_checks", checks);
  if (ar.saving()) return;
  reports_ = splitRows(reports, static_cast<std::size_t>(K_));
  checks_ = splitRows(checks, static_cast<std::size_t>(K_));
}

void AlphaFedAvg::record(const FlContext&, RecordSink& sink) const {
  // One row per round, like the rest of /rounds (clients report every round, evaluated or not).
  const std::uint64_t K = static_cast<std::uint64_t>(K_);
  const std::uint64_t T = reports_.size();
  sink.writeArray("/rounds/reported_accuracy", flattenRows(reports_), {T, K});
  sink.writeArray("/alpha_fedavg/verified_accuracy", flattenRows(checks_), {T, K});
  sink.writeScalar("/alpha_fedavg/alpha", alphaKnown_ ? alpha_ : kNaN);
  sink.writeScalar("/alpha_fedavg/efficiency_target", target_);
  sink.writeIntScalar("/alpha_fedavg/search_round", searchedAt_);
  std::vector<double> trace;
  for (const auto& [a, e] : search_.trace) {
    trace.push_back(a);
    trace.push_back(e);
  }
  sink.writeArray("/alpha_fedavg/search_trace", trace, {static_cast<std::uint64_t>(search_.trace.size()), 2});
  std::string how;
  if (!opt_.autoAlpha) {
    how = fmt("fixed alpha = ", alpha_);
  } else if (search_.trace.empty() && search_.outcome == AlphaSearchOutcome::NoData) {
    how = "alpha not chosen (the run ended before the search round)";
  } else {
    how = search_.describe();
  }
  sink.writeStrings("/alpha_fedavg/search_outcome", {how});
  sink.writeIntArray("/alpha_fedavg/excluded", std::vector<std::int64_t>(excluded_.begin(), excluded_.end()), {K});
  sink.writeIntArray("/alpha_fedavg/strikes", std::vector<std::int64_t>(strikes_.begin(), strikes_.end()), {K});
}

std::unique_ptr<Algorithm> makeAlphaFedAvg(const ExperimentConfig& cfg) {
  return std::make_unique<AlphaFedAvg>(AlphaFedAvgOptions::parse(cfg));
}

}  // namespace fedsilo
