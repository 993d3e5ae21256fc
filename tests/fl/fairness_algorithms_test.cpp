// Option validation of alpha_fedavg / qffl / fedfa, q-FFL's proportional sampling and FedFa's weights.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "fl/algorithms/alpha_fedavg.hpp"
#include "fl/algorithms/fedfa.hpp"
#include "fl/algorithms/qffl.hpp"
#include "app/config_parser.hpp"

using namespace fedsilo;

namespace {

ExperimentConfig parse(std::vector<std::string> extra) {
  std::vector<std::string> args{"--clients", "10"};
  args.insert(args.end(), extra.begin(), extra.end());
  return parseArguments(args).config;
}

void expectConfigError(std::vector<std::string> args, const std::string& mention) {
  try {
    parse(std::move(args));
    FAIL() << "expected a ConfigError mentioning " << mention;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(mention), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(AlphaFedAvgOptions, ParsesAndValidates) {
  ExperimentConfig c = parse({"--algorithm", "alpha_fedavg", "--alpha_fedavg.alpha", "2.5", "--alpha_fedavg.liars",
                              "1,3", "--alpha_fedavg.verify_samples", "20"});
  AlphaFedAvgOptions o = AlphaFedAvgOptions::parse(c);
  EXPECT_FALSE(o.autoAlpha);
  EXPECT_DOUBLE_EQ(o.alpha, 2.5);
  EXPECT_EQ(o.liars, (std::vector<int>{1, 3}));
  EXPECT_EQ(o.verifySamples, 20);
  o = AlphaFedAvgOptions::parse(parse({"--algorithm", "alpha_fedavg"}));
  EXPECT_TRUE(o.autoAlpha);  // default: auto
  EXPECT_LT(o.efficiencyTarget, 0.0);
  EXPECT_EQ(o.searchRound, 1);
  o = AlphaFedAvgOptions::parse(parse({"--algorithm", "alpha_fedavg", "--alpha_fedavg.reference_accuracy", "0.5,0.7",
                                       "--alpha_fedavg.efficiency_target", "0.6"}));
  EXPECT_EQ(o.referenceAccuracy, (std::vector<double>{0.5, 0.7}));
  EXPECT_DOUBLE_EQ(o.efficiencyTarget, 0.6);

  expectConfigError({"--algorithm", "alpha_fedavg", "--alpha_fedavg.alpha", "0"}, "alpha_fedavg.alpha = 0");
  expectConfigError({"--algorithm", "alpha_fedavg", "--alpha_fedavg.alpha", "fair"}, "alpha_fedavg.alpha");
  expectConfigError({"--algorithm", "alpha_fedavg", "--alpha_fedavg.liars", "3,10"}, "alpha_fedavg.liars");
  expectConfigError({"--algorithm", "alpha_fedavg", "--alpha_fedavg.efficiency_target", "1.5"},
                    "alpha_fedavg.efficiency_target = 1.5");
  expectConfigError({"--algorithm", "alpha_fedavg", "--alpha_fedavg.reference_accuracy", "0.5,1.2"},
                    "alpha_fedavg.reference_accuracy");
  expectConfigError({"--algorithm", "alpha_fedavg", "--alpha_fedavg.reference", "/tmp/x.h5"}, "alpha_fedavg.reference");
  expectConfigError({"--algorithm", "qffl", "--qffl.q", "-1"}, "qffl.q = -1");
  expectConfigError({"--algorithm", "fedfa", "--fedfa.alpha", "2"}, "fedfa.alpha = 2");
  expectConfigError({"--algorithm", "fedfa", "--fedfa.server_momentum", "1"}, "fedfa.server_momentum");
}

TEST(QFfl, ProportionalSamplingWithoutReplacement) {
  const std::vector<double> n{100, 0, 50, 10, 400, 1, 0, 30};
  for (int round = 0; round < 200; ++round) {
    Rng rng(3, -1, round, Purpose::Select);
    const auto s = sampleProportional(n, 4, rng);
    ASSERT_EQ(s.size(), 4u);
    for (std::size_t i = 0; i < s.size(); ++i) {
      EXPECT_GT(n[s[i]], 0.0) << "a zero-sample client was drawn while others were left";
      if (i) {
        EXPECT_LT(s[i - 1], s[i]);  // ascending, distinct
      }
    }
    Rng again(3, -1, round, Purpose::Select);
    EXPECT_EQ(sampleProportional(n, 4, again), s);  // deterministic
  }
  // One draw: frequencies ∝ n_k.
  std::vector<int> hits(n.size(), 0);
  const int draws = 20000;
  for (int t = 0; t < draws; ++t) {
    Rng rng(5, -1, t, Purpose::Select);
    hits[sampleProportional(n, 1, rng)[0]]++;
  }
  const double total = 591.0;
  for (std::size_t k = 0; k < n.size(); ++k) EXPECT_NEAR(hits[k] / double(draws), n[k] / total, 0.015) << k;
  Rng rng(1, -1, 0, Purpose::Select);
  EXPECT_EQ(sampleProportional(n, 0, rng).size(), n.size());  // 0 = everybody
}

TEST(FedFa, InformationQuantityWeights) {
  // Equal accuracies and frequencies: uniform.
  auto p = fedFaWeights({0.5, 0.5, 0.5}, {2, 2, 2}, 0.5);
  for (double v : p) EXPECT_NEAR(v, 1.0 / 3.0, 1e-15);
  // Hand values: acc (0.2, 0.8): I = (-ln 0.2, -ln 0.8), normalised; frequencies equal -> 1/2 each.
  p = fedFaWeights({0.2, 0.8}, {1, 1}, 0.5);
  const double i0 = -std::log(0.2), i1 = -std::log(0.8);
  EXPECT_NEAR(p[0], 0.5 * i0 / (i0 + i1) + 0.25, 1e-15);
  EXPECT_NEAR(p[1], 0.5 * i1 / (i0 + i1) + 0.25, 1e-15);
  EXPECT_NEAR(p[0] + p[1], 1.0, 1e-15);
  EXPECT_GT(p[0], p[1]);  // the low-accuracy client gets more weight
  // The rarely chosen client gets more weight (alpha = 0: frequency only).
  p = fedFaWeights({0.5, 0.5}, {1, 9}, 0.0);
  EXPECT_GT(p[0], p[1]);
  // One participant: weight 1.
  EXPECT_DOUBLE_EQ(fedFaWeights({0.3}, {4}, 0.5)[0], 1.0);
}
