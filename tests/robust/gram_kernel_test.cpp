// Krum's Gram kernel (robust/gram_kernel.hpp) against a plain double Gram matrix on sizes that are not
// multiples of its tile or packet, the centred partial Gram's distances against the direct double
// distances within their stated bound (robust/pairwise_distances.hpp), and the four-row direct
// distances against squaredDistance bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "robust/gram_kernel.hpp"
#include "robust/pairwise_distances.hpp"

using namespace fedsilo;

namespace {

float uniform(unsigned& state) {
  state = state * 1664525u + 1013904223u;
  return static_cast<float>(state >> 8) / 16777216.0f - 0.5f;
}

// K rows of `width` random floats (scales spread over several binades) at `stride`, zero past width.
std::vector<float> randomRows(int K, std::size_t width, std::size_t stride, unsigned seed) {
  std::vector<float> rows(static_cast<std::size_t>(K) * stride, 0.0f);
  for (int k = 0; k < K; ++k)
    for (std::size_t l = 0; l < width; ++l)
      rows[static_cast<std::size_t>(k) * stride + l] = std::ldexp(uniform(seed), k % 5 - 2);
  return rows;
}

std::size_t at(int i, int j) {
  return static_cast<std::size_t>(i) * static_cast<std::size_t>(i + 1) / 2 + static_cast<std::size_t>(j);
}

double gammaOf(int m) {
  const double u = std::ldexp(1.0, -24);
  return m * u / (1.0 - m * u);
}

}  // namespace

// Every lower-triangle entry is added to what was there, within gamma(kGramFloatRoundings) of the sum
// of |y_il y_jl| from the exact dot product (products of floats are exact in double; the double sums'
// own error is far below the slack added).
TEST(GramKernel, AddsTheLowerTriangleWithinItsBound) {
  const std::size_t lanes = gramLanes(), most = gramMaxColumns();
  for (int K : {1, 2, 3, 4, 5, 6, 7, 11, 13, 17}) {
    for (std::size_t width : {std::size_t{1}, std::size_t{3}, lanes - 1, lanes + 1, std::size_t{37}, most - 1, most}) {
      if (width == 0) continue;
      for (std::size_t extra : {std::size_t{0}, lanes + 3}) {
        const std::size_t stride = gramPaddedWidth(width) + extra;
        const std::vector<float> y = randomRows(K, width, stride, static_cast<unsigned>(K * 1000 + width));
        std::vector<double> packed(static_cast<std::size_t>(K) * static_cast<std::size_t>(K + 1) / 2);
        for (std::size_t e = 0; e < packed.size(); ++e) packed[e] = static_cast<double>(e);
        addLowerGram(y.data(), K, stride, width, packed.data());
        for (int i = 0; i < K; ++i)
          for (int j = 0; j <= i; ++j) {
            double exact = 0.0, magnitude = 0.0;
            for (std::size_t l = 0; l < width; ++l) {
              const double p = static_cast<double>(y[static_cast<std::size_t>(i) * stride + l]) *
                               static_cast<double>(y[static_cast<std::size_t>(j) * stride + l]);
              exact += p;
              magnitude += std::fabs(p);
            }
            const double bound = gammaOf(kGramFloatRoundings) * magnitude + 1e-12 * magnitude;
            EXPECT_NEAR(packed[at(i, j)] - static_cast<double>(at(i, j)), exact, bound)
                << "K " << K << " width " << width << " stride " << stride << " entry " << i << "," << j;
          }
      }
    }
  }
}

// An entry's bits depend on its two rows only, not on where they sit among the rows (their tile and
// place in it) or on the other rows: what makes the blocks' partials the same on any process.
TEST(GramKernel, AnEntryDependsOnItsRowsOnly) {
  const std::size_t width = gramMaxColumns() - 5, stride = gramPaddedWidth(width);
  const int K = 13;
  const std::vector<float> y = randomRows(K, width, stride, 7u);
  std::vector<double> all(static_cast<std::size_t>(K) * (K + 1) / 2, 0.0);
  addLowerGram(y.data(), K, stride, width, all.data());
  for (int i = 0; i < K; ++i)
    for (int j = 0; j <= i; ++j) {
      std::vector<float> pair(2 * stride, 0.0f);
      std::copy_n(y.data() + static_cast<std::size_t>(j) * stride, stride, pair.data());
      std::copy_n(y.data() + static_cast<std::size_t>(i) * stride, stride, pair.data() + stride);
      std::vector<double> two(3, 0.0);
      addLowerGram(pair.data(), 2, stride, width, two.data());
      EXPECT_EQ(all[at(i, j)], i == j ? two[at(1, 1)] : two[at(1, 0)]) << "entry " << i << "," << j;
    }
}

// The centred partial Gram matrices of blocks of odd widths (more than one kernel call each), summed,
// give distances within the bound distancesFromGram states of the direct double distances, on rows
// with a large common part (where centring matters).
TEST(GramKernel, PartialGramDistancesHoldTheirBound) {
  for (int K : {2, 7, 13}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{29}, gramMaxColumns() + 1, 2 * gramMaxColumns() + 333}) {
      UpdateMatrix u(K, n);
      unsigned seed = static_cast<unsigned>(K + n);
      for (std::size_t l = 0; l < n; ++l) {
        const float base = 100.0f + uniform(seed);
        for (int k = 0; k < K; ++k) u.row(k)[l] = base + 1e-3f * static_cast<float>(1 + k % 3) * uniform(seed);
      }
      std::vector<double> gram(static_cast<std::size_t>(K) * static_cast<std::size_t>(K + 1) / 2, 0.0);
      for (std::size_t c0 = 0; c0 < n; c0 += 1000) {
        const std::vector<double> partial = partialGram(u, c0, std::min<std::size_t>(1000, n - c0));
        for (std::size_t e = 0; e < gram.size(); ++e) gram[e] += partial[e];
      }
      const PairwiseDistances d = distancesFromGram(gram, K, n);
      for (int i = 0; i < K; ++i)
        for (int j = 0; j < i; ++j) {
          const double direct = squaredDistance(u.row(i), u.row(j), n);
          EXPECT_LE(std::fabs(d.at(i, j) - direct), d.errorAt(i, j))
              << "K " << K << " n " << n << " pair " << i << "," << j;
        }
    }
  }
}

TEST(GramKernel, FourRowDistancesHaveSquaredDistancesBits) {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{5}, std::size_t{17},
                        std::size_t{1001}}) {
    const std::vector<float> rows = randomRows(5, n, n + 1, static_cast<unsigned>(n));
    const float* x = rows.data();
    const float* const y[4] = {x + (n + 1), x + 2 * (n + 1), x + 3 * (n + 1), x + 4 * (n + 1)};
    double d[4];
    squaredDistances4(x, y, n, d);
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(d[r], squaredDistance(x, y[r], n)) << "n " << n << " row " << r;
      EXPECT_EQ(d[r], squaredDistance(y[r], x, n)) << "n " << n << " row " << r << " (swapped)";
    }
  }
}
