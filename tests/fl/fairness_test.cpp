// Fairness metrics and the α-FedAvg machinery (fl/fairness.hpp): hand values, the monotonicity
// theorems as property tests over many random accuracy vectors, and Algorithm 1 (the α search).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/rng.hpp"
#include "fl/fairness.hpp"

using namespace fedsilo;

namespace {

std::vector<double> randomAccuracies(std::uint64_t seed) {
  Rng rng(seed, -1, -1, Purpose::Misc);
  const int K = 2 + static_cast<int>(rng.below(60));
  std::vector<double> a(static_cast<std::size_t>(K));
  for (double& v : a) {
    const double u = rng.uniform();
    // Mostly ordinary accuracies, some near 0 (clamped) and some exactly 1.
    v = u < 0.05 ? rng.uniform(0.0, 1e-4) : u > 0.95 ? 1.0 : rng.uniform(0.02, 1.0);
  }
  return a;
}

double harmonicMean(const std::vector<double>& a) {
  double s = 0.0;
  for (double v : a) s += 1.0 / clampAccuracy(v);
  return static_cast<double>(a.size()) / s;
}

}  // namespace

TEST(Fairness, JainHandValues) {
  EXPECT_DOUBLE_EQ(jainIndex({1, 1, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(jainIndex({1, 0, 0, 0}), 0.25);
  EXPECT_DOUBLE_EQ(jainIndex({1, 2, 3}), 36.0 / 42.0);
  EXPECT_DOUBLE_EQ(jainIndex({0.5, std::numeric_limits<double>::quiet_NaN(), 0.5}), 1.0);  // NaN skipped
  EXPECT_TRUE(std::isnan(jainIndex({0, 0})));
}

TEST(Fairness, EfficiencyHandValues) {
  EXPECT_DOUBLE_EQ(efficiency({0.5, 1.0}, {1, 3}), 0.875);
  EXPECT_DOUBLE_EQ(efficiency({0.2, 0.4, 0.9}, {1, 1, 1}), 0.5);
  EXPECT_DOUBLE_EQ(efficiency({0.2, std::numeric_limits<double>::quiet_NaN()}, {1, 5}), 0.2);
}

TEST(Fairness, AlphaFairWeightsHandValues) {
  const std::vector<double> a{0.25, 1.0};
  // α = 1: uniform.
  auto p = alphaFairWeights(a, 1.0);
  EXPECT_DOUBLE_EQ(p[0], 0.5);
  EXPECT_DOUBLE_EQ(p[1], 0.5);
  // α = 2: p ∝ a^(-1/2) = (2, 1).
  p = alphaFairWeights(a, 2.0);
  EXPECT_NEAR(p[0], 2.0 / 3.0, 1e-15);
  EXPECT_NEAR(p[1], 1.0 / 3.0, 1e-15);
  EXPECT_DOUBLE_EQ(alphaFairWeight(0.25, 2.0), 2.0);
  // R = a p = (1/6, 1/3): E = 1/2, J = (1/2)^2 / (2 (1/36 + 1/9)) = 0.9.
  EXPECT_NEAR(alphaEfficiency(a, 2.0), 0.5, 1e-15);
  EXPECT_NEAR(alphaFairness(a, 2.0), 0.9, 1e-14);
  const auto r = utilities(a, p);
  EXPECT_NEAR(r[0], 1.0 / 6.0, 1e-15);
  // Sample-weighted: p ∝ w^(1/α) a^(1/α-1); w = (4, 1), α = 2: (2·2, 1·1) -> (0.8, 0.2).
  p = alphaFairWeights(a, 2.0, {4.0, 1.0});
  EXPECT_NEAR(p[0], 0.8, 1e-15);
  EXPECT_NEAR(p[1], 0.2, 1e-15);
  // Accuracies are clamped away from 0: a = 0 behaves as 1e-6 (weight 1e3 at α = 2).
  EXPECT_NEAR(alphaFairWeight(0.0, 2.0), 1e3, 1e-9);
  // NaN accuracies get weight 0.
  p = alphaFairWeights({0.5, std::numeric_limits<double>::quiet_NaN()}, 3.0);
  EXPECT_DOUBLE_EQ(p[0], 1.0);
  EXPECT_DOUBLE_EQ(p[1], 0.0);
}

TEST(Fairness, EfficiencyLimits) {
  const std::vector<double> a{0.3, 0.6, 0.9};
  EXPECT_NEAR(alphaEfficiency(a, 1.0), 0.6, 1e-15);                       // E(1): the plain mean
  EXPECT_NEAR(alphaEfficiency(a, 1e9), harmonicMean(a), 1e-8);             // E(∞): the harmonic mean
  EXPECT_NEAR(alphaEfficiency(a, 1e-10), 0.9, 1e-15);                      // E(τ): the best accuracy
  EXPECT_NEAR(alphaFairness(a, 1e9), 1.0, 1e-8);                           // R_k all equal
  EXPECT_NEAR(alphaEfficiency(a, 1e9, {5, 1, 1}), harmonicMean(a), 1e-8);  // weighted too
}

// Theorems 1 and 2 (reconstructed): for α > 1, J(α) is non-decreasing and E(α) non-increasing.
TEST(Fairness, PropertyMonotoneInAlphaOverManySeeds) {
  const std::vector<double> grid{1.0, 1.1, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 7.5, 10.0, 20.0, 50.0, 200.0, 1e4};
  int checked = 0;
  for (std::uint64_t seed = 0; seed < 500; ++seed) {
    const auto a = randomAccuracies(seed);
    double prevE = alphaEfficiency(a, grid[0]), prevJ = alphaFairness(a, grid[0]);
    for (std::size_t i = 1; i < grid.size(); ++i) {
      const double e = alphaEfficiency(a, grid[i]), j = alphaFairness(a, grid[i]);
      ASSERT_LE(e, prevE + 1e-12 * std::fabs(prevE)) << "seed " << seed << " alpha " << grid[i];
      ASSERT_GE(j, prevJ - 1e-12) << "seed " << seed << " alpha " << grid[i];
      ASSERT_GE(j, 1.0 / static_cast<double>(a.size()) - 1e-12);
      ASSERT_LE(j, 1.0 + 1e-12);
      prevE = e;
      prevJ = j;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 500 * 14);
}

TEST(AlphaSearch, HitsEveryReachableTargetWithinLambda) {
  const AlphaSearchOptions opt;  // λ = 1e-5, Λ = 1, τ = 1e-10, α0 = 1
  int newtonOnly = 0;
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    const auto a = randomAccuracies(seed);
    Rng rng(seed, -1, -1, Purpose::Misc, 1);
    const double lo = harmonicMean(a), hi = alphaEfficiency(a, opt.floor);
    if (hi - lo < 1e-4) continue;
    for (int rep = 0; rep < 3; ++rep) {
      const double target = rng.uniform(lo, hi);
      const AlphaSearchResult r = searchAlpha(a, target);
      ASSERT_TRUE(r.converged) << "seed " << seed << ": " << r.describe();
      ASSERT_EQ(r.outcome, AlphaSearchOutcome::Converged);
      ASSERT_LT(std::fabs(alphaEfficiency(a, r.alpha) - target), opt.tolerance) << r.describe();
      ASSERT_GE(r.alpha, opt.floor);
      ASSERT_NEAR(r.rangeLow, lo, 1e-12);
      ASSERT_FALSE(r.trace.empty());
      EXPECT_EQ(r.trace.front().first, 1.0);  // α0
      EXPECT_EQ(r.trace.back().first, r.alpha);
      EXPECT_EQ(r.trace.back().second, r.efficiency);
      if (r.bisectionSteps == 0) ++newtonOnly;
    }
  }
  EXPECT_GT(newtonOnly, 0);  // the paper's iteration itself does converge on ordinary inputs
}

TEST(AlphaSearch, ReportsUnreachableTargets) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const auto a = randomAccuracies(seed);
    const double lo = harmonicMean(a), hi = alphaEfficiency(a, 1e-10);
    const AlphaSearchResult below = searchAlpha(a, lo - 1e-3);
    EXPECT_FALSE(below.converged);
    EXPECT_EQ(below.outcome, AlphaSearchOutcome::BelowRange) << below.describe();
    if (hi + 1e-3 <= 1.0 + 1e-3) {
      const AlphaSearchResult above = searchAlpha(a, hi + 1e-3);
      EXPECT_FALSE(above.converged);
      EXPECT_EQ(above.outcome, AlphaSearchOutcome::AboveRange) << above.describe();
      EXPECT_NE(above.describe().find("unreachable"), std::string::npos);
    }
  }
  EXPECT_EQ(searchAlpha({}, 0.5).outcome, AlphaSearchOutcome::NoData);
  // All accuracies equal: E is constant, reachable only at that value.
  EXPECT_TRUE(searchAlpha({0.7, 0.7, 0.7}, 0.7).converged);
  EXPECT_EQ(searchAlpha({0.7, 0.7, 0.7}, 0.71).outcome, AlphaSearchOutcome::AboveRange);
}

TEST(AlphaSearch, HandCaseAndBisectionFallback) {
  const std::vector<double> a{0.25, 1.0};
  // E(2) = 0.5 (see AlphaFairWeightsHandValues): the search for E_T = 0.5 must return α ≈ 2.
  AlphaSearchResult r = searchAlpha(a, 0.5);
  ASSERT_TRUE(r.converged) << r.describe();
  EXPECT_NEAR(r.alpha, 2.0, 1e-3);
  EXPECT_GT(r.newtonSteps, 0);
  // Target at E(1) = mean: zero steps.
  r = searchAlpha(a, 0.625);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.newtonSteps, 0);
  EXPECT_EQ(r.alpha, 1.0);
  // No Newton steps allowed: the bisection fallback alone must reach the target.
  AlphaSearchOptions opt;
  opt.maxIterations = 0;
  r = searchAlpha(a, 0.5, {}, opt);
  ASSERT_TRUE(r.converged) << r.describe();
  EXPECT_GT(r.bisectionSteps, 0);
  EXPECT_NEAR(r.alpha, 2.0, 1e-3);
  // Targets below 1 (α < 1: E_T above the mean) are reachable down to τ.
  r = searchAlpha(a, 0.9);
  ASSERT_TRUE(r.converged) << r.describe();
  EXPECT_LT(r.alpha, 1.0);
}

TEST(AlphaSearch, WeightedVariantWithEqualWeightsMatchesUnweighted) {
  const auto a = randomAccuracies(7);
  const std::vector<double> w(a.size(), 3.0);
  const double t = 0.5 * (alphaEfficiency(a, 1.0) + harmonicMean(a));
  const auto r1 = searchAlpha(a, t), r2 = searchAlpha(a, t, w);
  ASSERT_TRUE(r1.converged && r2.converged);
  EXPECT_NEAR(r1.alpha, r2.alpha, 1e-6 * r1.alpha);
}
