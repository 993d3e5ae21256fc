// The unbiased compressors (qsgd, randk) over many keyed draws: the mean of the decoded vectors
// converges to the input. Each element's mean must lie within 5 standard errors of its input, the
// variance taken from the compressor's own formula (so the bound is neither hand-tuned nor loose).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "compress/qsgd_codec.hpp"
#include "compress/randk_codec.hpp"

using namespace fedsilo;

namespace {

std::vector<float> randomVector(std::size_t n, std::uint64_t seed) {
  std::vector<float> x(n);
  Rng rng(seed, -1, -1, Purpose::Misc);
  for (float& v : x) v = static_cast<float>(rng.normal());
  return x;
}

// The mean of `draws` decodings, each drawn with round = its index.
std::vector<double> meanDecoded(const Compressor& c, const std::vector<float>& x, const BlockLayout& blocks,
                                int draws) {
  std::vector<double> mean(x.size(), 0.0);
  for (int r = 0; r < draws; ++r) {
    const auto y = c.decode(c.encode(x.data(), x.size(), blocks, StreamKey{42, 6, r, Link::Uplink}));
    for (std::size_t i = 0; i < x.size(); ++i) mean[i] += y[i];
  }
  for (double& m : mean) m /= draws;
  return mean;
}

}  // namespace

TEST(CompressUnbiased, QsgdMeanConvergesToTheInput) {
  const std::vector<float> x = randomVector(96, 1);
  const BlockLayout blocks = {{0, 64}, {64, 32}};
  const int draws = 4000;
  for (int bits : {1, 2, 4}) {
    const QsgdCodec qsgd(bits);
    const auto mean = meanDecoded(qsgd, x, blocks, draws);
    double total = 0.0, totalMean = 0.0, totalVar = 0.0;
    for (const BlockSpan& b : blocks) {
      double norm = 0.0;
      for (std::size_t i = b.offset; i < b.offset + b.size; ++i) norm += double(x[i]) * x[i];
      const double unit = std::sqrt(norm) / qsgd.levels();
      for (std::size_t i = b.offset; i < b.offset + b.size; ++i) {
        // decoded = sign · unit · (floor(r) + Bernoulli(p)), p = r - floor(r): variance unit² p (1 - p)
        const double r = std::fabs(x[i]) / unit, p = r - std::floor(r);
        const double se = unit * std::sqrt(p * (1 - p) / draws);
        EXPECT_NEAR(mean[i], x[i], 5 * se + 1e-6) << "bits " << bits << " element " << i;
        total += x[i];
        totalVar += se * se;
        totalMean += mean[i];
      }
    }
    EXPECT_NEAR(totalMean, total, 5 * std::sqrt(totalVar)) << bits;
  }
}

TEST(CompressUnbiased, QsgdAtOneBitIsFarFromTheInputInEachDrawButNotOnAverage) {
  // The check above would pass for a compressor that returned x itself; this one fails for it.
  const std::vector<float> x = randomVector(64, 2);
  const QsgdCodec qsgd(1);
  const auto once = qsgd.decode(qsgd.encode(x.data(), 64, {{0, 64}}, StreamKey{42, 6, 0, Link::Uplink}));
  double err = 0.0;
  for (std::size_t i = 0; i < 64; ++i) err += std::fabs(once[i] - x[i]);
  EXPECT_GT(err / 64, 0.3);
}

TEST(CompressUnbiased, RandKMeanConvergesToTheInput) {
  const std::vector<float> x = randomVector(80, 3);
  const BlockLayout blocks = {{0, 50}, {50, 30}};
  const int draws = 4000;
  const RandKCodec randk(0.2);
  const auto mean = meanDecoded(randk, x, blocks, draws);
  for (const BlockSpan& b : blocks) {
    const double k = std::llround(0.2 * b.size), scale = b.size / k;
    for (std::size_t i = b.offset; i < b.offset + b.size; ++i) {
      // decoded = scale · x_i with probability 1 / scale: variance x_i² (scale - 1)
      const double se = std::fabs(x[i]) * std::sqrt((scale - 1) / draws);
      EXPECT_NEAR(mean[i], x[i], 5 * se + 1e-6) << "element " << i;
    }
  }
}
