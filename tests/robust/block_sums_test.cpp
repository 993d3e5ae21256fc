// Krum, geomed, centered clipping and norm clipping by column blocks (robust/block_sums.hpp): the blocks' partial
// sums are joined in block order; at every block width the result is the whole-row computation's up to
// rounding (geomed, centered clipping, norm clipping, against plain reference loops here; Krum's choice against the
// direct double distances in aggregator_test.cpp). That the ranks sharing the blocks get the one
// process's bits is tests/mpi/robust_columns_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "robust/block_sums.hpp"

using namespace fedsilo;

namespace {

UpdateMatrix randomRows(int K, std::size_t n, unsigned seed) {
  UpdateMatrix u(K, n);
  unsigned state = seed;
  for (int k = 0; k < K; ++k)
    for (std::size_t i = 0; i < n; ++i) {
      state = state * 1664525u + 1013904223u;
      const float noise = static_cast<float>(state >> 8) / 16777216.0f - 0.5f;
      u.row(k)[i] = (k % 4 == 3 ? 5.0f : 0.0f) + (1.0f + 0.1f * static_cast<float>(k)) * noise;  // every 4th far
    }
  return u;
}

// ||x_k - z|| for every row, whole rows in one plain sum.
std::vector<double> distancesTo(const UpdateMatrix& u, const std::vector<double>& z) {
  std::vector<double> d;
  for (int k = 0; k < u.rows; ++k) {
    double s = 0.0;
    for (std::size_t i = 0; i < u.cols; ++i) s += (u.row(k)[i] - z[i]) * (u.row(k)[i] - z[i]);
    d.push_back(std::sqrt(s));
  }
  return d;
}

std::vector<double> combination(const UpdateMatrix& u, const std::vector<double>& coeff) {
  std::vector<double> z(u.cols, 0.0);
  for (int k = 0; k < u.rows; ++k)
    for (std::size_t i = 0; i < u.cols; ++i) z[i] += coeff[static_cast<std::size_t>(k)] * u.row(k)[i];
  return z;
}

// Weiszfeld from the weighted mean, `iterations` steps, no stopping test (eps 0 in the tests).
std::vector<double> referenceGeomed(const UpdateMatrix& u, const std::vector<double>& w, int iterations) {
  double total = 0.0;
  for (double x : w) total += x;
  std::vector<double> beta(w.size());
  for (std::size_t k = 0; k < w.size(); ++k) beta[k] = w[k] / total;
  std::vector<double> z = combination(u, beta);
  for (int t = 0; t < iterations; ++t) {
    const std::vector<double> d = distancesTo(u, z);
    double sum = 0.0;
    for (std::size_t k = 0; k < w.size(); ++k) sum += beta[k] = w[k] / d[k];
    for (double& b : beta) b /= sum;
    z = combination(u, beta);
  }
  return z;
}

std::vector<double> referenceCenteredClip(const UpdateMatrix& u, const std::vector<double>& w, double tau,
                                          int iterations, std::vector<double> v) {
  double total = 0.0;
  for (double x : w) total += x;
  for (int l = 0; l < iterations; ++l) {
    const std::vector<double> d = distancesTo(u, v);
    std::vector<double> next = v;
    for (int k = 0; k < u.rows; ++k) {
      const double c = w[static_cast<std::size_t>(k)] / total * std::min(1.0, tau / d[static_cast<std::size_t>(k)]);
      for (std::size_t i = 0; i < u.cols; ++i) next[i] += c * (u.row(k)[i] - v[i]);
    }
    v = next;
  }
  return v;
}

void expectNear(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], tol * (1.0 + std::fabs(b[i]))) << i;
}

const std::vector<std::size_t> kWidths = {1, 7, 64, 250, 1000};

}  // namespace

TEST(BlockSums, PartialsAreAddedInBlockOrderFromZero) {
  // (0 + 1e16) + 1 rounds to 1e16, so in block order the sum is 1; the two 1s first would give 2, the
  // two large values first 2 as well.
  EXPECT_EQ(sumInBlockOrder({1e16, 1.0, -1e16, 1.0}, 1), std::vector<double>{1.0});
  EXPECT_EQ(sumInBlockOrder({1.0, 2.0, 10.0, 20.0, 100.0, 200.0}, 2), (std::vector<double>{111.0, 222.0}));
  EXPECT_EQ(sumInBlockOrder({}, 3), std::vector<double>(3, 0.0));
}

TEST(BlockSums, GeomedAtAnyBlockWidthIsTheWholeRowWeiszfeld) {
  const UpdateMatrix u = randomRows(9, 1000, 3u);
  const std::vector<double> w = {1, 2, 3, 1, 2, 3, 1, 2, 3};
  AggregatorConfig cfg;
  cfg.kind = AggregatorKind::Geomed;
  cfg.geomedIterations = 4;
  cfg.geomedEps = 0.0;
  const std::vector<double> expect = referenceGeomed(u, w, 4);
  for (std::size_t width : kWidths)
    expectNear(aggregateBySummedBlocks(cfg, AggregateInput{u, w, {}}, width).aggregate, expect, 1e-12);
}

TEST(BlockSums, CenteredClipAtAnyBlockWidthIsTheWholeRowIteration) {
  const UpdateMatrix u = randomRows(9, 1000, 5u);
  const std::vector<double> w = {3, 1, 2, 3, 1, 2, 3, 1, 2};
  AggregatorConfig cfg;
  cfg.kind = AggregatorKind::CenteredClip;
  cfg.clipTau = 12.0;  // the far rows (distance about 160) are clipped, the near ones (about 9 to 18) partly
  cfg.clipIterations = 3;
  const std::vector<double> center(1000, 0.25);
  const std::vector<double> expect = referenceCenteredClip(u, w, 12.0, 3, center);
  for (std::size_t width : kWidths)
    expectNear(aggregateBySummedBlocks(cfg, AggregateInput{u, w, center}, width).aggregate, expect, 1e-12);
}

TEST(BlockSums, NormClipAtAnyBlockWidthIsTheWholeRowClip) {
  const UpdateMatrix u = randomRows(9, 1000, 7u);
  const std::vector<double> w = {2, 1, 1, 2, 1, 1, 2, 1, 1};
  AggregatorConfig cfg;
  cfg.kind = AggregatorKind::NormClip;
  cfg.clipNorm = 12.0;  // the far rows (norm about 160) are clipped, most near ones (9 to 18) partly
  const std::vector<double> zero(1000, 0.0);
  const std::vector<double> norms = distancesTo(u, zero);
  std::vector<double> coeff;
  for (std::size_t k = 0; k < w.size(); ++k) coeff.push_back(w[k] / 12.0 * std::min(1.0, 12.0 / norms[k]));
  const std::vector<double> expect = combination(u, coeff);
  for (std::size_t width : kWidths) {
    const AggregateResult r = aggregateBySummedBlocks(cfg, AggregateInput{u, w, {}}, width);
    expectNear(r.aggregate, expect, 1e-12);
    for (std::size_t k = 0; k < w.size(); ++k) EXPECT_NEAR(r.weight[k], std::min(1.0, 12.0 / norms[k]), 1e-12);
  }
}
