#include "privacy/client_dp.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"

using namespace fedsilo;

TEST(ClipL2, ScalesLongVectorsToTheClipAndKeepsShortOnes) {
  std::vector<float> v = {3.0f, 4.0f, 0.0f, -12.0f};  // norm 13
  const double before = clipL2(v.data(), v.size(), 6.5);
  EXPECT_DOUBLE_EQ(before, 13.0);
  EXPECT_NEAR(l2Norm(v.data(), v.size()), 6.5, 1e-5);
  EXPECT_FLOAT_EQ(v[0], 1.5f);  // direction kept: every coordinate halved
  EXPECT_FLOAT_EQ(v[3], -6.0f);

  std::vector<float> shortOne = {0.3f, -0.4f};
  const std::vector<float> copy = shortOne;
  EXPECT_NEAR(clipL2(shortOne.data(), shortOne.size(), 1.0), 0.5, 1e-7);
  EXPECT_EQ(shortOne, copy);

  EXPECT_THROW(clipL2(v.data(), v.size(), 0.0), ConfigError);
  EXPECT_THROW(clipL2(v.data(), v.size(), -1.0), ConfigError);
  EXPECT_THROW(clipL2(v.data(), v.size(), NAN), ConfigError);
  std::vector<float> bad = {1.0f, NAN};
  EXPECT_THROW(clipL2(bad.data(), bad.size(), 1.0), NumericError);
}

TEST(PoissonSampling, KeyedPerClientAndRoundAtTheRequestedRate) {
  const int clients = 1000;
  std::size_t total = 0;
  for (int round = 0; round < 50; ++round) {
    const auto sel = poissonSample(42, round, clients, 0.1);
    total += sel.size();
    EXPECT_TRUE(std::is_sorted(sel.begin(), sel.end()));
    for (int k : sel) EXPECT_TRUE(poissonSelected(42, k, round, 0.1));
    // The same key gives the same sample; the selection of one client does not depend on the others.
    EXPECT_EQ(sel, poissonSample(42, round, clients, 0.1));
    std::vector<int> firstHalf;
    for (int k : sel)
      if (k < clients / 2) firstHalf.push_back(k);
    EXPECT_EQ(firstHalf, poissonSample(42, round, clients / 2, 0.1));
  }
  // 50 000 Bernoulli(0.1) draws: mean 5000, standard deviation 67.
  EXPECT_NEAR(static_cast<double>(total), 5000.0, 300.0);
  EXPECT_NE(poissonSample(42, 0, clients, 0.1), poissonSample(42, 1, clients, 0.1));
  EXPECT_NE(poissonSample(42, 0, clients, 0.1), poissonSample(43, 0, clients, 0.1));
  EXPECT_TRUE(poissonSample(42, 0, clients, 0.0).empty());
  EXPECT_EQ(poissonSample(42, 0, clients, 1.0).size(), static_cast<std::size_t>(clients));
  EXPECT_THROW(poissonSample(42, 0, clients, 1.5), ConfigError);
}

TEST(GaussianNoise, CentralAndClientStreamsAreKeyedAndIndependent) {
  std::vector<float> a(1000, 0.0f), b(1000, 0.0f);
  Rng r1 = centralNoiseRng(7, 3), r2 = centralNoiseRng(7, 3);
  addGaussianNoise(a.data(), a.size(), 1.0, r1);
  addGaussianNoise(b.data(), b.size(), 1.0, r2);
  EXPECT_EQ(a, b);
  std::vector<float> c(1000, 0.0f), d(1000, 0.0f);
  Rng r3 = centralNoiseRng(7, 4), r4 = clientNoiseRng(7, 0, 3);
  addGaussianNoise(c.data(), c.size(), 1.0, r3);
  addGaussianNoise(d.data(), d.size(), 1.0, r4);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
}

// Distributed DP: n clients each add N(0, (z C)^2 / n); the sum has standard deviation z C, the
// central noise the accountant assumes.
TEST(GaussianNoise, DistributedSharesSumToTheCentralStandardDeviation) {
  const double z = 1.2, clip = 0.5;
  const int n = 16;
  const std::size_t dim = 50000;
  std::vector<double> sum(dim, 0.0);
  for (int k = 0; k < n; ++k) {
    std::vector<double> share(dim, 0.0);
    Rng rng = clientNoiseRng(11, k, 2);
    addGaussianNoise(share.data(), dim, distributedNoiseStd(z, clip, n), rng);
    for (std::size_t i = 0; i < dim; ++i) sum[i] += share[i];
  }
  double ss = 0.0, mean = 0.0;
  for (double x : sum) mean += x / dim;
  for (double x : sum) ss += (x - mean) * (x - mean);
  const double sd = std::sqrt(ss / (dim - 1));
  // The sample standard deviation of 50 000 normals is within 1% of the truth at ~3 sigma.
  EXPECT_NEAR(sd, z * clip, 0.01 * z * clip);
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_DOUBLE_EQ(distributedNoiseStd(z, clip, 1), z * clip);
  EXPECT_THROW(distributedNoiseStd(z, clip, 0), ConfigError);
}

TEST(AdaptiveClip, GeometricStepFollowsTheNoiselessFraction) {
  AdaptiveClip clip({1.0, 0.5, 0.2, 0.0});
  // Every client at or below the clip: b = 1, C <- C exp(-0.2 * 0.5).
  EXPECT_DOUBLE_EQ(clip.update(10, 10, 10.0, 1, 0), 1.0);
  EXPECT_NEAR(clip.clip(), std::exp(-0.1), 1e-15);
  // None: b = 0, C <- C exp(+0.2 * 0.5), back to 1.
  EXPECT_DOUBLE_EQ(clip.update(0, 10, 10.0, 1, 1), 0.0);
  EXPECT_NEAR(clip.clip(), 1.0, 1e-15);
  // Exactly the target quantile: unchanged.
  clip.update(5, 10, 10.0, 1, 2);
  EXPECT_NEAR(clip.clip(), 1.0, 1e-15);
  clip.restore(0.25);
  EXPECT_EQ(clip.clip(), 0.25);
  EXPECT_THROW(clip.restore(0.0), RuntimeError);
  EXPECT_THROW(AdaptiveClip({0.0, 0.5, 0.2, 0.0}), ConfigError);
  EXPECT_THROW(AdaptiveClip({1.0, 1.0, 0.2, 0.0}), ConfigError);
  EXPECT_THROW(AdaptiveClip({1.0, 0.5, -0.2, 0.0}), ConfigError);
}

// With the paper's count noise (m / 20), the clip norm converges to the target quantile of the norms:
// norms uniform on [0, 10], 100 clients per round, target median 5.
TEST(AdaptiveClip, ConvergesToTheTargetQuantile) {
  const int m = 100;
  for (double gamma : {0.3, 0.5, 0.8}) {
    AdaptiveClip clip({0.1, gamma, 0.2, m / 20.0});
    double late = 0.0;
    for (int round = 0; round < 400; ++round) {
      Rng norms(5, -1, round, Purpose::Misc);
      int below = 0;
      for (int i = 0; i < m; ++i) below += norms.uniform(0.0, 10.0) <= clip.clip();
      clip.update(below, m, m, 5, round);
      if (round >= 300) late += clip.clip() / 100.0;
    }
    EXPECT_NEAR(late, 10.0 * gamma, 0.1 * 10.0 * gamma) << "gamma " << gamma;
  }
}

// Andrew et al. 2021, Theorem 1: 1/z^2 = 1/z_update^2 + 1/(2 sigma_b)^2.
TEST(AdaptiveClip, UpdateNoiseMultiplierComposesToTheTarget) {
  const double z = 1.0, sigmaB = 5.0;
  const double zUpdate = updateNoiseMultiplier(z, sigmaB);
  EXPECT_NEAR(1.0 / (zUpdate * zUpdate) + 1.0 / (4 * sigmaB * sigmaB), 1.0 / (z * z), 1e-14);
  EXPECT_GT(zUpdate, z);
  EXPECT_THROW(updateNoiseMultiplier(1.0, 0.5), ConfigError);  // 2 sigma_b = z: the count alone costs all
  EXPECT_THROW(updateNoiseMultiplier(1.0, 0.0), ConfigError);
  EXPECT_THROW(updateNoiseMultiplier(0.0, 5.0), ConfigError);
}
