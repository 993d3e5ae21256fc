// The single-precision sampler of DP-SGD's noise: its output against the normal distribution (moments,
// tails, Kolmogorov-Smirnov), independence (across keys, across blocks, within a Box-Muller pair),
// determinism (repeat, prefix, every instruction-set build the same bits).
#include "privacy/gaussian_f32.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/rng.hpp"
#include "privacy/normal_f32_block.hpp"
#include "privacy/normal_f32_paths.hpp"

using namespace fedsilo;

namespace {

double phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }  // standard normal CDF

std::vector<float> draws(std::size_t n, Rng key, float stddev = 1.0f) {
  std::vector<float> z(n, 0.0f);
  addScaledNormalsF32(z.data(), n, stddev, key);
  return z;
}

// Sample correlation of a[i] and b[i].
double correlation(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = static_cast<double>(a.size());
  double ma = 0.0, mb = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) ma += a[i] / n, mb += b[i] / n;
  double ab = 0.0, aa = 0.0, bb = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i)
    ab += (a[i] - ma) * (b[i] - mb), aa += (a[i] - ma) * (a[i] - ma), bb += (b[i] - mb) * (b[i] - mb);
  return ab / std::sqrt(aa * bb);
}

}  // namespace

// 2^21 draws: the standard errors are mean 0.0007, variance 0.001, fourth moment 0.0066; tolerances are
// about 5 of them.
TEST(GaussianF32, SamplesFollowTheStandardNormal) {
  std::vector<float> z = draws(std::size_t(1) << 21, Rng(17, -1, 1, Purpose::DpSgdNoise));
  const double n = static_cast<double>(z.size());
  double mean = 0.0, m2 = 0.0, m4 = 0.0;
  for (float v : z) mean += v / n;
  for (float v : z) m2 += (v - mean) * (v - mean) / n, m4 += std::pow(v - mean, 4) / n;
  EXPECT_NEAR(mean, 0.0, 0.0035);
  EXPECT_NEAR(m2, 1.0, 0.005);
  EXPECT_NEAR(m4 / (m2 * m2), 3.0, 0.035);  // kurtosis
  // Tail probabilities, 3 and 4 sigma included, within 5 binomial standard errors.
  for (double t : {0.5, 1.0, 2.0, 3.0, 4.0}) {
    const double p = 2.0 * (1.0 - phi(t));
    const double observed =
        static_cast<double>(std::count_if(z.begin(), z.end(), [t](float v) { return std::fabs(v) > t; })) / n;
    EXPECT_NEAR(observed, p, 5.0 * std::sqrt(p * (1 - p) / n)) << "P(|Z| > " << t << ")";
  }
  // The bound of 24-bit uniforms: |z| <= sqrt(-2 ln 2^-24) = 5.768.
  for (float v : z) ASSERT_LE(std::fabs(v), 5.77f);
  const double positive = static_cast<double>(std::count_if(z.begin(), z.end(), [](float v) { return v > 0; })) / n;
  EXPECT_NEAR(positive, 0.5, 0.002);
  // Kolmogorov-Smirnov: D sqrt(n) below 1.95 (the 0.1% critical value).
  std::sort(z.begin(), z.end());
  double d = 0.0;
  for (std::size_t i = 0; i < z.size(); ++i)
    d = std::max({d, std::fabs(phi(z[i]) - static_cast<double>(i) / n), std::fabs(phi(z[i]) - (i + 1.0) / n)});
  EXPECT_LT(d * std::sqrt(n), 1.95);
}

// Values of one stream: neighbours, the two values of a Box-Muller pair (i and i + 16 in a block of 32),
// the same lane of adjacent blocks (i and i + 32), and their squares (a shared radius would show there),
// all uncorrelated: |r| within 5 standard errors (1 / sqrt(n)).
TEST(GaussianF32, ValuesOfOneStreamAreUncorrelated) {
  const std::size_t n = std::size_t(1) << 20;
  const std::vector<float> z = draws(n + 64, Rng(3, 4, 5, Purpose::DpSgdNoise, 6));
  for (std::size_t lag : {1u, 16u, 32u}) {
    std::vector<double> a, b, a2, b2;
    for (std::size_t i = 0; i < n; ++i) {
      if (lag == 16 && i % 32 >= 16) continue;  // pairs only
      a.push_back(z[i]), b.push_back(z[i + lag]);
      a2.push_back(double(z[i]) * z[i]), b2.push_back(double(z[i + lag]) * z[i + lag]);
    }
    const double bound = 5.0 / std::sqrt(static_cast<double>(a.size()));
    EXPECT_NEAR(correlation(a, b), 0.0, bound) << "lag " << lag;
    EXPECT_NEAR(correlation(a2, b2), 0.0, bound) << "squares, lag " << lag;
  }
}

// Different keys (the step, the round, the client) give uncorrelated noise, never the same value at
// the same index beyond chance.
TEST(GaussianF32, DifferentKeysAreUncorrelated) {
  const std::size_t n = 200000;
  const Rng keys[] = {Rng(3, 4, 5, Purpose::DpSgdNoise, 6), Rng(3, 4, 5, Purpose::DpSgdNoise, 7),
                      Rng(3, 4, 6, Purpose::DpSgdNoise, 6), Rng(3, 5, 5, Purpose::DpSgdNoise, 6)};
  std::vector<std::vector<double>> z;
  for (const Rng& key : keys) {
    const std::vector<float> f = draws(n, key);
    z.emplace_back(f.begin(), f.end());
  }
  for (std::size_t a = 0; a < z.size(); ++a)
    for (std::size_t b = a + 1; b < z.size(); ++b) {
      EXPECT_NEAR(correlation(z[a], z[b]), 0.0, 5.0 / std::sqrt(static_cast<double>(n))) << a << " " << b;
      std::size_t same = 0;
      for (std::size_t i = 0; i < n; ++i) same += z[a][i] == z[b][i];
      EXPECT_LT(same, 5u) << "keys " << a << " and " << b;
    }
}

TEST(GaussianF32, SameKeySameBitsAndOneKeyDraw) {
  Rng a(3, 4, 5, Purpose::DpSgdNoise, 9);
  std::vector<float> x(1000, 0.0f);
  addScaledNormalsF32(x.data(), x.size(), 1.0f, a);
  const std::vector<float> y = draws(1000, Rng(3, 4, 5, Purpose::DpSgdNoise, 9));
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(x[i], y[i]) << i;
  // The call takes one draw of the key, so the next call on the same key continues with fresh noise.
  std::vector<float> next(1000, 0.0f);
  addScaledNormalsF32(next.data(), next.size(), 1.0f, a);
  Rng c(3, 4, 5, Purpose::DpSgdNoise, 9);
  c.next();
  EXPECT_EQ(next, draws(1000, c));
  EXPECT_NE(next, x);
}

// Value i depends on the key and i only: a short call gives the first values of a long one, whatever
// the partial block at its end.
TEST(GaussianF32, ShortCallIsThePrefixOfALongerCall) {
  const std::vector<float> full = draws(4099, Rng(9, 1, 2, Purpose::DpSgdNoise));
  for (std::size_t n : {1u, 15u, 16u, 17u, 31u, 32u, 33u, 1000u, 4098u}) {
    const std::vector<float> part = draws(n, Rng(9, 1, 2, Purpose::DpSgdNoise));
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(part[i], full[i]) << "n = " << n << ", i = " << i;
  }
}

// Every build the CPU runs (AVX-512, AVX2, SSE2) gives the generic build's bits, scale and stddev
// included, on a partial last block too.
TEST(GaussianF32, EveryBuildGivesTheSameBits) {
  const std::size_t n = 100003;
  std::vector<float> start(n);
  for (std::size_t i = 0; i < n; ++i) start[i] = static_cast<float>(0.01 * (i % 13)) - 0.05f;
  std::vector<float> generic = start;
  Rng k0(4, 8, 15, Purpose::DpSgdNoise, 16);
  addScaledNormalsF32(generic.data(), n, 1.7f, k0, 1.0f / 3.0f, NormalF32Build::Generic);
  const int best = static_cast<int>(bestNormalF32Build());
  for (int b = 1; b <= best; ++b) {
    std::vector<float> x = start;
    Rng k(4, 8, 15, Purpose::DpSgdNoise, 16);
    addScaledNormalsF32(x.data(), n, 1.7f, k, 1.0f / 3.0f, static_cast<NormalF32Build>(b));
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(x[i], generic[i]) << "build " << b << ", i = " << i;
  }
  if (best < 2) GTEST_LOG_(INFO) << "this CPU runs " << best + 1 << " of the 3 builds";
}

// Exact tails: U1's smallest 24-bit value (one pair in 2^24) takes further bits, so -ln U1 - 24 ln 2
// there is Exp(1) (its mean 1, its median ln 2, its 99th percentile ln 100), not the constant 0 that
// capped every draw at sqrt(-2 ln 2^-24) = 5.77.
TEST(GaussianF32, TheTailBeyondTheSmallestUniformIsExponential) {
  const int n = 200000;
  std::vector<double> excess(n);
  for (int i = 0; i < n; ++i)
    excess[static_cast<std::size_t>(i)] = normal_f32::tailMinusLog(0x243f6a8885a308d3ULL, static_cast<std::uint64_t>(i)) -
                                          24.0 * std::log(2.0);
  double mean = 0.0;
  for (double e : excess) mean += e / n;
  EXPECT_NEAR(mean, 1.0, 5.0 / std::sqrt(static_cast<double>(n)));  // Exp(1): standard deviation 1
  for (double t : {std::log(2.0), std::log(10.0), std::log(100.0)}) {
    const double p = static_cast<double>(std::count_if(excess.begin(), excess.end(), [t](double e) { return e > t; })) / n;
    EXPECT_NEAR(p, std::exp(-t), 5.0 * std::sqrt(std::exp(-t) / n)) << t;
  }
  EXPECT_GT(*std::min_element(excess.begin(), excess.end()), -1e-5);
}

// A block holding a pair whose 24 uniform bits are all zero: every build returns the same values there,
// and that pair's radius, z_l^2 + z_(16+l)^2 = -2 ln U1, lies beyond the old cap 2 ln 2^24.
TEST(GaussianF32, APairInTheTailGoesBeyondTheOldCapInEveryBuild) {
  const std::uint64_t key = 0x13198a2e03707344ULL;
  std::uint64_t pair = 0;
  while ((normal_f32::pairBits(key, pair) & 0xffffffu) != 0u) ++pair;  // about 2^24 tries
  const std::uint64_t block = pair / normal_f32::kPairs;
  const int lane = static_cast<int>(pair % normal_f32::kPairs);
  std::vector<float> generic(normal_f32::kBlock, 0.0f);
  normal_f32::addScaledBlocksGeneric(generic.data(), key, block, 1, 1.0f, 1.0f);
  const double radius2 = static_cast<double>(generic[lane]) * generic[lane] +
                         static_cast<double>(generic[normal_f32::kPairs + lane]) * generic[normal_f32::kPairs + lane];
  EXPECT_GT(radius2, 48.0 * std::log(2.0) * (1.0 + 1e-5));
  const normal_f32::BlocksFn builds[] = {normal_f32::addScaledBlocksAvx2, normal_f32::addScaledBlocksAvx512};
  for (int b = 1; b <= static_cast<int>(bestNormalF32Build()); ++b) {
    std::vector<float> x(normal_f32::kBlock, 0.0f);
    builds[b - 1](x.data(), key, block, 1, 1.0f, 1.0f);
    EXPECT_EQ(x, generic) << "build " << b;
  }
}

// The scale argument (DP-SGD's 1 / expected batch size) gives the two-pass result, and the stddev
// multiplies the unit draws: (x + stddev z) rounded, then times scale.
TEST(GaussianF32, StddevAndScaleAreTheTwoPassResult) {
  const std::size_t n = 10007;
  const std::vector<float> unit = draws(n, Rng(4, 8, 15, Purpose::DpSgdNoise, 16));
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = i % 5 == 0 ? -0.0f : static_cast<float>(0.01 * (i % 13)) - 0.05f;
  std::vector<float> fused = x;
  Rng k(4, 8, 15, Purpose::DpSgdNoise, 16);
  addScaledNormalsF32(fused.data(), n, 1.7f, k, 1.0f / 32.0f);
  for (std::size_t i = 0; i < n; ++i) {
    const volatile float noise = 1.7f * unit[i];  // rounded on its own: no fused multiply-add here
    const float sum = x[i] + noise;
    ASSERT_EQ(fused[i], sum * (1.0f / 32.0f)) << "i = " << i;
  }
}

// A call writes x[0..n) and nothing beyond, also when its last block is partial.
TEST(GaussianF32, WritesOnlyItsValues) {
  for (std::size_t n = 0; n < 70; ++n) {
    std::vector<float> x(n + 40, 42.0f);
    Rng key(n, 1, 2, Purpose::DpSgdNoise);
    addScaledNormalsF32(x.data(), n, 1.0f, key);
    for (std::size_t i = 0; i < n; ++i) ASSERT_NE(x[i], 42.0f) << "n = " << n << ", i = " << i;
    for (std::size_t i = n; i < x.size(); ++i) ASSERT_EQ(x[i], 42.0f) << "n = " << n << ", i = " << i;
  }
}
