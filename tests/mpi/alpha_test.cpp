// α-FedAvg, q-FFL and FedFa in-process (np 1, 2, 4):
//  * the accuracy-report check excludes the liars within verify_strikes rounds and no honest client;
//  * α (searched at the server) and the aggregation weights are identical in a distributed run and in
//    a single-process run of the same configuration (so identical at 1, 2 and 4 ranks);
//  * q-FFL with q = 0 aggregates the plain mean of the local models, and with q = 1 the authors' update.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "comm/communicator.hpp"
#include "fl/algorithms/alpha_fedavg.hpp"
#include "fl/experiment.hpp"
#include "fl/fairness.hpp"
#include "app/config_parser.hpp"
#include "nn/presets.hpp"
#include "support/null_sink.hpp"
#include "support/world_vs_single.hpp"

using namespace fedsilo;

namespace {

// 8 clients of a Dirichlet(0.5) FashionMNIST partition, a small MLP; `extra` overrides the defaults.
ExperimentConfig tinyConfig(const std::string& algorithm, const std::vector<std::string>& extra) {
  std::map<std::string, std::string> opt{{"--algorithm", algorithm},
                                         {"--clients", "8"},
                                         {"--rounds", "4"},
                                         {"--model.hidden", "32"},
                                         {"--partition.samples_per_client", "300"},
                                         {"--partition.alpha", "0.5"},
                                         {"--train.batch", "16"},
                                         {"--train.lr", "0.05"},
                                         {"--eval.batch", "200"}};
  for (std::size_t i = 0; i + 1 < extra.size(); i += 2) opt[extra[i]] = extra[i + 1];
  std::vector<std::string> args;
  for (const auto& [k, v] : opt) args.insert(args.end(), {k, v});
  return parseArguments(args).config;
}

}  // namespace

TEST(AlphaFedAvg, LiarsAreExcludedAndHonestClientsAreNot) {
  const int strikes = 2;
  const ExperimentConfig cfg =
      tinyConfig("alpha_fedavg", {"--alpha_fedavg.alpha", "3", "--alpha_fedavg.verify_samples", "100",
                                  "--alpha_fedavg.verify_tolerance", "0.3", "--alpha_fedavg.verify_strikes",
                                  std::to_string(strikes), "--alpha_fedavg.liars", "2,5",
                                  "--alpha_fedavg.liar_boost", "0.6", "--rounds", "5",
                                  "--partition.samples_per_client", "1000"});
  Communicator world = Communicator::world();
  Experiment exp(cfg, world);
  test::MemorySink sink;
  exp.run(sink);
  exp.writeFinal(sink);
  auto& alg = dynamic_cast<AlphaFedAvg&>(exp.algorithm());
  const std::vector<int> expected{0, 0, 1, 0, 0, 1, 0, 0};
  EXPECT_EQ(alg.excluded(), expected);
  for (int k : {2, 5}) EXPECT_GE(alg.strikes()[k], strikes);
  for (int k : {0, 1, 3, 4, 6, 7}) EXPECT_LT(alg.strikes()[k], strikes) << "honest client " << k;
  // Every client takes part every round here, so the liars are out after `strikes` rounds: from round
  // `strikes` on (the exclusion decided at the end of round strikes-1) their weight is 0.
  const auto& rows = sink.rows.at("weight");
  ASSERT_EQ(rows.size(), 5u);
  for (std::size_t t = 0; t < rows.size(); ++t) {
    const auto w = world.allgatherv(rows[t]);
    ASSERT_EQ(w.size(), 8u);
    for (int k : {2, 5}) {
      if (static_cast<int>(t) >= strikes) {
        EXPECT_EQ(w[k], 0.0) << "liar " << k << " round " << t;
      } else {
        EXPECT_GT(w[k], 0.0) << "liar " << k << " round " << t;
      }
    }
    for (int k : {0, 1, 3, 4, 6, 7}) EXPECT_GT(w[k], 0.0) << "honest client " << k << " round " << t;
  }
  // The records: excluded/strikes arrays and the reports (liars' inflated values visible).
  EXPECT_EQ(sink.values.at("/alpha_fedavg/alpha"), std::vector<double>{3.0});
  const auto& rep = sink.values.at("/rounds/reported_accuracy");
  ASSERT_EQ(rep.size(), 5u * 8u);
  const auto& chk = sink.values.at("/alpha_fedavg/verified_accuracy");
  for (int k : {2, 5}) EXPECT_GT(rep[k] - chk[k], 0.3);  // round 0: the boost shows
}

TEST(AlphaFedAvg, WeightsFollowTheAlphaFairFormula) {
  // Fixed α = 2, all clients every round: from round 1 on each client's share is
  // a_k^(-1/2) / Σ_j a_j^(-1/2) of its report; round 0 is n_k / Σ n_j.
  const ExperimentConfig cfg = tinyConfig("alpha_fedavg", {"--alpha_fedavg.alpha", "2", "--rounds", "3"});
  Communicator world = Communicator::world();
  Experiment exp(cfg, world);
  test::MemorySink sink;
  exp.run(sink);
  const auto& alg = dynamic_cast<AlphaFedAvg&>(exp.algorithm());
  const auto& reports = alg.reportHistory();
  ASSERT_EQ(reports.size(), 3u);
  const auto& rows = sink.rows.at("weight");
  std::vector<double> n;
  for (const auto& c : exp.context().clients) n.push_back(static_cast<double>(c.numTrain()));
  double sn = 0.0;
  for (double v : n) sn += v;
  const auto w0 = world.allgatherv(rows[0]);
  for (int k = 0; k < 8; ++k) EXPECT_NEAR(w0[k], n[k] / sn, 1e-12);
  for (int t = 1; t < 3; ++t) {
    const auto w = world.allgatherv(rows[t]);
    const auto p = alphaFairWeights(reports[t], 2.0);
    for (int k = 0; k < 8; ++k) EXPECT_NEAR(w[k], p[k], 1e-12) << "round " << t << " client " << k;
  }
}

TEST(AlphaFedAvg, AccuracyFloorBoundsTheWeightOfLowReports) {
  // With alpha_fedavg.accuracy_floor = 0.6, a report below 0.6 weighs as 0.6 would.
  const ExperimentConfig cfg = tinyConfig(
      "alpha_fedavg", {"--alpha_fedavg.alpha", "2", "--rounds", "3", "--alpha_fedavg.accuracy_floor", "0.6"});
  Communicator world = Communicator::world();
  Experiment exp(cfg, world);
  test::MemorySink sink;
  exp.run(sink);
  const auto& reports = dynamic_cast<AlphaFedAvg&>(exp.algorithm()).reportHistory();
  const auto& rows = sink.rows.at("weight");
  int below = 0;
  for (int t = 1; t < 3; ++t) {
    std::vector<double> floored = reports[t];
    for (double& a : floored) {
      below += a < 0.6 ? 1 : 0;
      a = std::max(a, 0.6);
    }
    const auto w = world.allgatherv(rows[t]);
    const auto p = alphaFairWeights(floored, 2.0);
    for (int k = 0; k < 8; ++k) EXPECT_NEAR(w[k], p[k], 1e-12) << "round " << t << " client " << k;
  }
  EXPECT_GT(below, 0) << "no report fell below the floor: the test no longer exercises it";
}

TEST(AlphaFedAvg, ReferenceSearchRunsBeforeTraining) {
  const std::string ref = "0.9,0.8,0.85,0.4,0.95,0.7,0.6,0.9";
  const ExperimentConfig cfg = tinyConfig("alpha_fedavg", {"--alpha_fedavg.reference_accuracy", ref, "--rounds", "1"});
  Communicator world = Communicator::world();
  Experiment exp(cfg, world);
  const auto& alg = dynamic_cast<AlphaFedAvg&>(exp.algorithm());
  ASSERT_TRUE(alg.alphaKnown());
  std::vector<double> a{0.9, 0.8, 0.85, 0.4, 0.95, 0.7, 0.6, 0.9}, n;
  for (const auto& c : exp.context().clients) n.push_back(static_cast<double>(c.numTrain()));
  const AlphaSearchResult r = searchAlpha(a, efficiency(a, n));
  ASSERT_TRUE(r.converged);
  EXPECT_EQ(alg.alpha(), r.alpha);
  EXPECT_EQ(alg.search().trace.size(), r.trace.size());
  EXPECT_LT(std::fabs(alphaEfficiency(a, alg.alpha()) - efficiency(a, n)), 1e-5);
  // An unreachable target fails at start-up with the range in the message.
  const ExperimentConfig bad =
      tinyConfig("alpha_fedavg", {"--alpha_fedavg.reference_accuracy", ref, "--alpha_fedavg.efficiency_target", "0.99"});
  try {
    Experiment e2(bad, world);
    FAIL() << "expected an unreachable-target error";
  } catch (const Error& e) {
    // Every rank fails; the lowest rethrows its own ConfigError, the others PeerFailure.
    if (world.rank() == 0) {
      EXPECT_NE(dynamic_cast<const ConfigError*>(&e), nullptr);
      EXPECT_NE(std::string(e.what()).find("unreachable"), std::string::npos) << e.what();
    }
  }
}

class FairnessInvariance : public ::testing::TestWithParam<const char*> {};

TEST_P(FairnessInvariance, DistributedRunEqualsSingleProcessRun) {
  // eval.every 3: rounds 0 and 3 evaluated, yet every per-round record has a row for each of the 4 rounds.
  std::vector<std::string> extra{"--fl.clients_per_round", "5", "--eval.every", "3"};
  if (std::string(GetParam()) == "alpha_fedavg")
    extra.insert(extra.end(), {"--alpha_fedavg.verify_samples", "10", "--alpha_fedavg.liars", "1"});
  if (std::string(GetParam()) == "fedfa") extra.insert(extra.end(), {"--fedfa.server_momentum", "0.5"});
  const ExperimentConfig cfg = tinyConfig(GetParam(), extra);
  const test::WorldAndSingle r = test::runOnWorldAndAlone(cfg);
  const test::RunRecords& a = r.world;
  const test::RunRecords& b = r.single;
  // Every record (weights per round, α and its search, the reports, FedFa's weights) bit for bit.
  EXPECT_TRUE(test::identicalRecords(a, b));
  ASSERT_EQ(a.global.size(), b.global.size());
  EXPECT_EQ(0, std::memcmp(a.global.data(), b.global.data(), a.global.size() * sizeof(float)))
      << "the global models differ";
  const auto& weights = a.roundClients.at("weight");  // per round, all K clients
  ASSERT_EQ(weights.size(), 4u);
  int participants = 0;
  for (double w : weights.back()) participants += w > 0 ? 1 : 0;
  if (std::string(GetParam()) == "alpha_fedavg") {
    // α was searched by the server at the end of round 1 and used from round 2 on.
    const double alpha = a.datasets.at("/alpha_fedavg/alpha").at(0);
    EXPECT_TRUE(std::isfinite(alpha) && alpha > 0.0) << alpha;
    EXPECT_FALSE(a.datasets.at("/alpha_fedavg/search_trace").empty());
    EXPECT_EQ(a.datasets.at("/rounds/reported_accuracy").size(), 4u * 8u);
    EXPECT_EQ(a.datasets.at("/alpha_fedavg/verified_accuracy").size(), 4u * 8u);
  }
  if (std::string(GetParam()) == "fedfa") {
    EXPECT_EQ(a.datasets.at("/fedfa/weight").size(), 4u * 8u);
  }
  if (std::string(GetParam()) != "fedfa") {
    EXPECT_EQ(participants, 5);  // fedfa: weights in /fedfa/weight
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, FairnessInvariance, ::testing::Values("alpha_fedavg", "qffl", "fedfa"));

// q = 0: Δ_k = L (w^t - w̄_k), h_k = L, so w^{t+1} = mean_k w̄_k; q = 1: w^t - Σ F_k Δw_k / Σ h_k.
// The local models w̄_k after one round from w^0 are exactly `local`'s personal models after round 0.
TEST(QFfl, OneRoundMatchesTheAuthorsUpdate) {
  Communicator single = Communicator::single();
  const ExperimentConfig lc = tinyConfig("local", {"--rounds", "1"});
  Experiment local(lc, single);
  const std::vector<float> w0 = local.global();
  test::NullSink sink;
  local.run(sink);
  const FlContext& ctx = local.context();
  const std::size_t P = w0.size();
  std::vector<std::vector<float>> wk(8, std::vector<float>(P));
  for (int k = 0; k < 8; ++k) local.algorithm().loadEvalParams(ctx, k, w0, wk[k].data());
  // F_k: the initial model's mean loss on each client's training split.
  auto model = buildModel<float>(lc.model, ctx.input);
  model->reserve(lc.eval.batch);
  LocalTrainer trainer(ctx.data.train, lc.eval.batch);
  std::memcpy(model->params(), w0.data(), P * sizeof(float));
  std::vector<double> F(8);
  for (int k = 0; k < 8; ++k) F[k] = trainer.evaluate(*model, ctx.data.train, ctx.clients[k].train, lc.eval.batch).meanLoss();
  const double L = 1.0 / lc.train.lr;
  for (double q : {0.0, 1.0}) {
    const ExperimentConfig qc = tinyConfig("qffl", {"--rounds", "1", "--qffl.q", q == 0.0 ? "0" : "1"});
    Experiment qe(qc, single);
    ASSERT_EQ(qe.global(), w0);
    qe.run(sink);
    std::vector<double> num(P, 0.0);
    double H = 0.0;
    for (int k = 0; k < 8; ++k) {
      const double Fq = std::pow(F[k] + 1e-10, q);
      double n2 = 0.0;
      for (std::size_t i = 0; i < P; ++i) {
        const double dw = L * (double(w0[i]) - double(wk[k][i]));
        n2 += dw * dw;
        num[i] += Fq * dw;
      }
      H += q * std::pow(F[k] + 1e-10, q - 1.0) * n2 + L * Fq;
    }
    double maxErr = 0.0, maxMove = 0.0;
    for (std::size_t i = 0; i < P; ++i) {
      const double expect = double(w0[i]) - num[i] / H;
      maxErr = std::max(maxErr, std::fabs(expect - double(qe.global()[i])));
      maxMove = std::max(maxMove, std::fabs(expect - double(w0[i])));
      if (q == 0.0) {
        double mean = 0.0;
        for (int k = 0; k < 8; ++k) mean += wk[k][i] / 8.0;
        ASSERT_NEAR(mean, expect, 1e-5);
      }
    }
    EXPECT_LT(maxErr, 1e-5) << "q = " << q;
    EXPECT_GT(maxMove, 1e-3) << "q = " << q << ": the model should have moved";
  }
}
