// The ziggurat sampler: its table against Marsaglia and Tsang's constants, and its output against the
// normal distribution (moments, tail probabilities, Kolmogorov-Smirnov).
#include "privacy/gaussian.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/rng.hpp"

using namespace fedsilo;

namespace {
double phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }  // standard normal CDF
}  // namespace

// Source: Marsaglia and Tsang 2000 (J. Stat. Software 5(8)), the 256-layer constants r = 3.6541528853610088
// and v = 0.00492867323399 (quoted from memory of the paper's code; our table solves for them).
TEST(Ziggurat, TableMatchesMarsagliaTsang) {
  const ZigguratShape s = zigguratShape();
  EXPECT_NEAR(s.r, 3.6541528853610088, 1e-9);
  EXPECT_NEAR(s.area, 0.00492867323399, 1e-12);
}

namespace {

void expectStandardNormal(std::vector<double> z, const char* which) {
  const int n = static_cast<int>(z.size());
  double mean = 0.0, m2 = 0.0, m4 = 0.0;
  for (double v : z) mean += v / n;
  for (double v : z) m2 += (v - mean) * (v - mean) / n, m4 += std::pow(v - mean, 4) / n;
  // Standard errors at n = 1e6: mean 0.001, variance 0.0014, fourth moment 0.0095.
  EXPECT_NEAR(mean, 0.0, 0.005) << which;
  EXPECT_NEAR(m2, 1.0, 0.007) << which;
  EXPECT_NEAR(m4, 3.0, 0.05) << which;
  // Tail probabilities, including beyond r = 3.654 where the tail sampler takes over.
  for (double t : {0.5, 1.0, 2.0, 3.0, 3.654, 4.0}) {
    const double p = 2.0 * (1.0 - phi(t));
    const double observed =
        static_cast<double>(std::count_if(z.begin(), z.end(), [t](double v) { return std::fabs(v) > t; })) / n;
    EXPECT_NEAR(observed, p, 5.0 * std::sqrt(p * (1 - p) / n) + 1e-6) << which << ": P(|Z| > " << t << ")";
  }
  const double positive = static_cast<double>(std::count_if(z.begin(), z.end(), [](double v) { return v > 0; })) / n;
  EXPECT_NEAR(positive, 0.5, 0.0025) << which;
  // Kolmogorov-Smirnov: D * sqrt(n) below 1.95 (the 0.1% critical value).
  std::sort(z.begin(), z.end());
  double d = 0.0;
  for (int i = 0; i < n; ++i)
    d = std::max(
        {d, std::fabs(phi(z[i]) - static_cast<double>(i) / n), std::fabs(phi(z[i]) - static_cast<double>(i + 1) / n)});
  EXPECT_LT(d * std::sqrt(static_cast<double>(n)), 1.95) << which;
}

}  // namespace

TEST(Ziggurat, SamplesFollowTheStandardNormal) {
  Rng rng(17, -1, 0, Purpose::DpNoise);
  std::vector<double> z(1000000);
  for (auto& v : z) v = zigguratNormal(rng);
  expectStandardNormal(z, "zigguratNormal");
}

TEST(Ziggurat, BulkNoiseFollowsTheStandardNormal) {
  Rng key(17, -1, 1, Purpose::DpNoise);
  std::vector<double> z(1000000, 0.0);
  addScaledNormals(z.data(), z.size(), 1.0, key);
  expectStandardNormal(z, "addScaledNormals");
  // Scaled and added; the same key gives the same noise, in float too.
  std::vector<double> base(1000, 2.0), scaled(1000, 0.0);
  Rng k1(5, 2, 7, Purpose::DpNoise), k2(5, 2, 7, Purpose::DpNoise);
  addScaledNormals(base.data(), base.size(), 0.5, k1);
  addScaledNormals(scaled.data(), scaled.size(), 1.0, k2);
  for (std::size_t i = 0; i < base.size(); ++i) EXPECT_DOUBLE_EQ(base[i], 2.0 + 0.5 * scaled[i]);
  std::vector<float> f(1000, 0.0f);
  Rng k3(5, 2, 7, Purpose::DpNoise);
  addScaledNormals(f.data(), f.size(), 1.0, k3);
  for (std::size_t i = 0; i < f.size(); ++i) EXPECT_EQ(f[i], static_cast<float>(scaled[i]));
}

TEST(Ziggurat, SameStreamSameDraws) {
  Rng a(3, 4, 5, Purpose::DpNoise), b(3, 4, 5, Purpose::DpNoise), c(3, 4, 6, Purpose::DpNoise);
  for (int i = 0; i < 1000; ++i) {
    const double x = zigguratNormal(a);
    EXPECT_EQ(x, zigguratNormal(b));
    EXPECT_NE(x, zigguratNormal(c));
  }
}

// Draw i of addScaledNormals depends on the key and i only (and the points rejected before i), never on
// n: whatever the length of the call, and wherever the 256-point blocks and the eight-flag words of the
// rejected points end, the first values are the same bits.
TEST(Ziggurat, BulkNoiseIsThePrefixOfALongerCall) {
  const std::size_t longest = 4099;
  std::vector<float> full(longest, 0.0f);
  Rng k0(9, 1, 2, Purpose::DpSgdNoise);
  addScaledNormals(full.data(), longest, 1.0, k0);
  for (std::size_t n : {1u, 7u, 8u, 9u, 255u, 256u, 257u, 1000u, 4098u}) {
    std::vector<float> part(n, 0.0f);
    Rng k(9, 1, 2, Purpose::DpSgdNoise);
    addScaledNormals(part.data(), n, 1.0, k);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(part[i], full[i]) << "n = " << n << ", i = " << i;
  }
}

// The scale argument (DP-SGD's 1 / expected batch size) gives exactly the two-pass result: the noised
// sum rounded to T, then multiplied; on the fast path and on the rejected points, from values including
// -0.0.
template <typename T>
void expectScaleIsASecondPass(T scale) {
  const std::size_t n = 10007;
  std::vector<T> start(n);
  for (std::size_t i = 0; i < n; ++i) start[i] = i % 5 == 0 ? T(-0.0) : static_cast<T>(0.01 * (i % 13)) - T(0.05);
  std::vector<T> fused = start, twoPass = start;
  Rng k1(4, 8, 15, Purpose::DpSgdNoise, 16), k2(4, 8, 15, Purpose::DpSgdNoise, 16);
  addScaledNormals(fused.data(), n, 1.7, k1, scale);
  addScaledNormals(twoPass.data(), n, 1.7, k2);
  for (T& v : twoPass) v *= scale;
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(fused[i], twoPass[i]) << "i = " << i;
}

TEST(Ziggurat, BulkNoiseScaleIsASecondPass) {
  expectScaleIsASecondPass<float>(1.0f / 32.0f);
  expectScaleIsASecondPass<float>(1.0f / 3.0f);
  expectScaleIsASecondPass<double>(1.0 / 3.0);
}

// Different keys (the round, the client) give uncorrelated noise: sample correlation within 5 standard
// errors (1 / sqrt(n)) of 0, and no value repeated at the same index beyond chance.
TEST(Ziggurat, BulkNoiseOfDifferentKeysIsUncorrelated) {
  const std::size_t n = 200000;
  const Rng keys[] = {Rng(3, 4, 5, Purpose::DpSgdNoise, 6), Rng(3, 4, 5, Purpose::DpSgdNoise, 7),
                      Rng(3, 4, 6, Purpose::DpSgdNoise, 6), Rng(3, 5, 5, Purpose::DpSgdNoise, 6)};
  std::vector<std::vector<double>> z;
  for (Rng key : keys) {
    z.emplace_back(n, 0.0);
    addScaledNormals(z.back().data(), n, 1.0, key);
  }
  for (std::size_t a = 0; a < z.size(); ++a)
    for (std::size_t b = a + 1; b < z.size(); ++b) {
      double dot = 0.0;
      std::size_t same = 0;
      for (std::size_t i = 0; i < n; ++i) dot += z[a][i] * z[b][i], same += z[a][i] == z[b][i];
      EXPECT_NEAR(dot / n, 0.0, 5.0 / std::sqrt(static_cast<double>(n))) << "keys " << a << " and " << b;
      EXPECT_EQ(same, 0u) << "keys " << a << " and " << b;
    }
}

// A call writes x[0..n) and nothing beyond, also when its last block is partial (the rejected points of
// the previous block must not be taken for the last block's).
TEST(Ziggurat, BulkNoiseWritesOnlyItsValues) {
  for (std::size_t n = 257; n < 264; ++n)
    for (std::uint64_t seed = 0; seed < 50; ++seed) {
      std::vector<float> x(n + 8, 42.0f);
      Rng key(seed, 1, 2, Purpose::DpSgdNoise);
      addScaledNormals(x.data(), n, 1.0, key);
      for (std::size_t i = n; i < x.size(); ++i) ASSERT_EQ(x[i], 42.0f) << "n = " << n << ", seed " << seed;
    }
}
