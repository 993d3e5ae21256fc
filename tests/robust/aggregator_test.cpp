// The robust aggregators against hand-computed small cases, and the reductions to the mean.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "robust/aggregator.hpp"
#include "robust/block_sums.hpp"

using namespace fedsilo;

namespace {

UpdateMatrix matrix(const std::vector<std::vector<float>>& rows) {
  UpdateMatrix u(static_cast<int>(rows.size()), rows.empty() ? 0 : rows[0].size());
  for (std::size_t k = 0; k < rows.size(); ++k)
    for (std::size_t i = 0; i < rows[k].size(); ++i) u.row(static_cast<int>(k))[i] = rows[k][i];
  return u;
}

AggregateResult run(AggregatorKind kind, const UpdateMatrix& u, const std::vector<double>& w, AggregatorConfig cfg = {},
                    std::vector<double> center = {}) {
  cfg.kind = kind;
  return aggregate(cfg, AggregateInput{u, w, center});
}

const std::vector<std::vector<float>> kRows = {{1, 10, -3}, {2, 20, 0}, {3, 30, 5}, {4, -40, 1}, {100, 50, 2}};
const std::vector<double> kEqual(5, 1.0);

}  // namespace

TEST(Aggregator, MeanIsTheWeightedMean) {
  const UpdateMatrix u = matrix({{1, 2}, {4, 8}});
  const AggregateResult r = run(AggregatorKind::Mean, u, {1.0, 3.0});
  EXPECT_DOUBLE_EQ(r.aggregate[0], 0.25 * 1 + 0.75 * 4);
  EXPECT_DOUBLE_EQ(r.aggregate[1], 0.25 * 2 + 0.75 * 8);
  EXPECT_DOUBLE_EQ(r.weight[1], 0.75);
}

TEST(Aggregator, MedianPerCoordinateOddAndEven) {
  const AggregateResult odd = run(AggregatorKind::Median, matrix(kRows), kEqual);
  EXPECT_DOUBLE_EQ(odd.aggregate[0], 3.0);
  EXPECT_DOUBLE_EQ(odd.aggregate[1], 20.0);
  EXPECT_DOUBLE_EQ(odd.aggregate[2], 1.0);
  const AggregateResult even = run(AggregatorKind::Median, matrix({{1, 7}, {9, 3}, {4, 100}, {2, -1}}), {1, 1, 1, 1});
  EXPECT_DOUBLE_EQ(even.aggregate[0], 3.0);  // (2 + 4) / 2
  EXPECT_DOUBLE_EQ(even.aggregate[1], 5.0);  // (3 + 7) / 2
}

// Random columns with ties, against a sort of each column: the sorting network's median and trimmed
// mean are exact, and the trimmed mean's weights (tied rows sharing the kept positions) sum to 1.
TEST(Aggregator, MedianAndTrimmedMeanMatchASortOfEachColumn) {
  for (int K : {1, 2, 3, 5, 8, 37, 100}) {
    const std::size_t n = 150;  // more than two tiles of columns
    UpdateMatrix u(K, n);
    unsigned state = 12345u + static_cast<unsigned>(K);
    for (float& x : u.values) {
      state = state * 1664525u + 1013904223u;
      x = static_cast<float>(static_cast<int>(state >> 24) % 7) - 3.0f;  // few values: many ties
    }
    AggregatorConfig cfg;
    cfg.trimFraction = 0.2;
    const std::vector<double> w(static_cast<std::size_t>(K), 1.0);
    const AggregateResult med = run(AggregatorKind::Median, u, w);
    const AggregateResult trim = run(AggregatorKind::TrimmedMean, u, w, cfg);
    const int b = trimmedCount(0.2, K);
    for (std::size_t c = 0; c < n; ++c) {
      std::vector<double> col;
      for (int k = 0; k < K; ++k) col.push_back(u.row(k)[c]);
      std::sort(col.begin(), col.end());
      const auto h = static_cast<std::size_t>(K / 2);
      EXPECT_EQ(med.aggregate[c], K % 2 ? col[h] : 0.5 * (col[h - 1] + col[h])) << "K " << K << " column " << c;
      double sum = 0.0;
      for (int p = b; p < K - b; ++p) sum += col[static_cast<std::size_t>(p)];
      EXPECT_NEAR(trim.aggregate[c], sum / (K - 2 * b), 1e-12) << "K " << K << " column " << c;
    }
    double total = 0.0;
    for (double x : trim.weight) total += x;
    EXPECT_NEAR(total, 1.0, 1e-12) << "K " << K;
  }
}

// The selection network's median and trimmed mean against a straightforward per-column reference, on
// values of many magnitudes (sums that round): the median is the sorted column's middle; the trimmed
// sum is, exactly as documented, the values strictly between the cuts in row order plus the kept
// copies of the cuts.
TEST(Aggregator, MedianAndTrimmedMeanEqualAPerColumnReferenceExactly) {
  unsigned state = 777u;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  for (int K : {1, 2, 4, 7, 16, 31, 32, 33, 64, 100, 129}) {
    for (double beta : {0.0, 0.1, 0.25, 0.45}) {
      const std::size_t n = 130;
      UpdateMatrix u(K, n);
      for (float& x : u.values)
        x = next() % 16 == 0
                ? static_cast<float>(next() % 3)  // some exact ties
                : std::ldexp(static_cast<float>(next()) / 16777216.0f - 0.5f, static_cast<int>(next() % 40) - 20);
      AggregatorConfig cfg;
      cfg.trimFraction = beta;
      const std::vector<double> w(static_cast<std::size_t>(K), 1.0);
      const AggregateResult med = run(AggregatorKind::Median, u, w);
      const AggregateResult trim = run(AggregatorKind::TrimmedMean, u, w, cfg);
      const int b = trimmedCount(beta, K);
      for (std::size_t c = 0; c < n; ++c) {
        std::vector<float> col;
        for (int k = 0; k < K; ++k) col.push_back(u.row(k)[c]);
        std::vector<float> sorted = col;
        std::sort(sorted.begin(), sorted.end());
        const auto h = static_cast<std::size_t>(K / 2);
        const double median = K % 2 ? sorted[h] : 0.5 * (static_cast<double>(sorted[h - 1]) + sorted[h]);
        ASSERT_EQ(med.aggregate[c], median) << "K " << K << " column " << c;
        const float lo = sorted[static_cast<std::size_t>(b)], hi = sorted[static_cast<std::size_t>(K - b - 1)];
        double sum = 0.0;
        for (float x : col)
          if (x > lo && x < hi) sum += x;
        int keptLo = 0, keptHi = 0;
        for (int p = b; p < K - b; ++p) {
          keptLo += sorted[static_cast<std::size_t>(p)] == lo;
          keptHi += sorted[static_cast<std::size_t>(p)] == hi;
        }
        sum += lo == hi ? (K - 2 * b) * static_cast<double>(lo)
                        : keptLo * static_cast<double>(lo) + keptHi * static_cast<double>(hi);
        ASSERT_EQ(trim.aggregate[c], sum / (K - 2 * b)) << "K " << K << " beta " << beta << " column " << c;
      }
    }
  }
}

TEST(Aggregator, MedianOfIdenticalUpdatesIsThatUpdate) {
  const std::vector<float> x = {0.1f, -2.5f, 3e-7f, 42.0f};
  const AggregateResult r = run(AggregatorKind::Median, matrix({x, x, x, x}), {1, 2, 3, 4});
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(r.aggregate[i], static_cast<double>(x[i]));
}

TEST(Aggregator, TrimmedMeanCutsTheExtremesOfEachCoordinate) {
  AggregatorConfig cfg;
  cfg.trimFraction = 0.2;  // b = 1 of 5
  const AggregateResult r = run(AggregatorKind::TrimmedMean, matrix(kRows), kEqual, cfg);
  EXPECT_DOUBLE_EQ(r.aggregate[0], (2.0 + 3.0 + 4.0) / 3.0);
  EXPECT_DOUBLE_EQ(r.aggregate[1], (10.0 + 20.0 + 30.0) / 3.0);
  EXPECT_DOUBLE_EQ(r.aggregate[2], (0.0 + 1.0 + 2.0) / 3.0);
  // Row 4 (100, 50, 2) is kept in one coordinate of three; row 1 (2, 20, 0) in all three.
  EXPECT_DOUBLE_EQ(r.weight[4], 1.0 / 9.0);
  EXPECT_DOUBLE_EQ(r.weight[1], 3.0 / 9.0);
  double total = 0.0;
  for (double w : r.weight) total += w;
  EXPECT_NEAR(total, 1.0, 1e-15);
}

TEST(Aggregator, TrimmedMeanWithBetaZeroIsTheMean) {
  AggregatorConfig cfg;
  cfg.trimFraction = 0.0;
  const AggregateResult t = run(AggregatorKind::TrimmedMean, matrix(kRows), kEqual, cfg);
  const AggregateResult m = run(AggregatorKind::Mean, matrix(kRows), kEqual);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(t.aggregate[i], m.aggregate[i], 1e-12);
}

TEST(Aggregator, NormClipWithAnInfiniteBoundIsTheMean) {
  AggregatorConfig cfg;
  cfg.clipNorm = std::numeric_limits<double>::infinity();
  const std::vector<double> w = {1, 2, 3, 4, 5};
  const AggregateResult c = run(AggregatorKind::NormClip, matrix(kRows), w, cfg);
  const AggregateResult m = run(AggregatorKind::Mean, matrix(kRows), w);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(c.aggregate[i], m.aggregate[i]);
  for (double f : c.weight) EXPECT_EQ(f, 1.0);
}

TEST(Aggregator, NormClipScalesLongUpdatesToTheBound) {
  AggregatorConfig cfg;
  cfg.clipNorm = 1.0;
  const AggregateResult r = run(AggregatorKind::NormClip, matrix({{3, 4}, {0.6f, 0}}), {1, 1}, cfg);
  EXPECT_DOUBLE_EQ(r.weight[0], 0.2);  // ||(3, 4)|| = 5
  EXPECT_DOUBLE_EQ(r.weight[1], 1.0);
  EXPECT_NEAR(r.aggregate[0], 0.5 * (0.6 + 0.6), 1e-7);
  EXPECT_NEAR(r.aggregate[1], 0.5 * 0.8, 1e-12);
}

TEST(Aggregator, KrumSelectsTheUpdateInTheDenseCluster) {
  // Three close updates and two far ones; f = 1: each score sums the K - f - 2 = 2 nearest distances.
  const UpdateMatrix u = matrix({{0, 0}, {1, 0}, {0, 1}, {10, 10}, {-9, 12}});
  AggregatorConfig cfg;
  cfg.byzantine = 1;
  const AggregateResult r = run(AggregatorKind::Krum, u, kEqual, cfg);
  // Scores: row 0: 1 + 1 = 2; row 1: 1 + 2 = 3; row 2: 1 + 2 = 3; the far rows are much larger.
  EXPECT_EQ(r.selected, (std::vector<char>{1, 0, 0, 0, 0}));
  EXPECT_DOUBLE_EQ(r.aggregate[0], 0.0);
  EXPECT_DOUBLE_EQ(r.aggregate[1], 0.0);
}

TEST(Aggregator, MultiKrumAveragesTheBestScores) {
  const UpdateMatrix u = matrix({{0, 0}, {1, 0}, {0, 1}, {10, 10}, {-9, 12}});
  AggregatorConfig cfg;
  cfg.byzantine = 1;
  cfg.krumM = 3;
  const AggregateResult r = run(AggregatorKind::MultiKrum, u, kEqual, cfg);
  EXPECT_EQ(r.selected, (std::vector<char>{1, 1, 1, 0, 0}));
  EXPECT_NEAR(r.aggregate[0], 1.0 / 3.0, 1e-15);
  EXPECT_NEAR(r.aggregate[1], 1.0 / 3.0, 1e-15);
  cfg.krumM = 0;  // n - f = 4
  EXPECT_EQ(run(AggregatorKind::MultiKrum, u, kEqual, cfg).selected, (std::vector<char>{1, 1, 1, 1, 0}));
}

TEST(Aggregator, KrumRefusesTooFewUpdates) {
  AggregatorConfig cfg;
  cfg.byzantine = 2;  // needs 7
  EXPECT_THROW(run(AggregatorKind::Krum, matrix(kRows), kEqual, cfg), std::invalid_argument);
}

TEST(Aggregator, GeomedOfIdenticalUpdatesIsThatUpdate) {
  const std::vector<float> x = {0.5f, -1.25f, 8.0f};
  const AggregateResult r = run(AggregatorKind::Geomed, matrix({x, x, x}), {2, 2, 2});
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_DOUBLE_EQ(r.aggregate[i], static_cast<double>(x[i]));
}

TEST(Aggregator, GeomedResistsAFarOutlierAndDownweightsIt) {
  // Four points at the corners of the unit square and one far away: the geometric median stays
  // inside the square (x ~ 0.81, where the corners' unit pulls balance the outlier's; the mean moves
  // to x = 20.4), and the outlier's Weiszfeld share is the least.
  const UpdateMatrix u = matrix({{0, 0}, {1, 0}, {0, 1}, {1, 1}, {100, 0.5f}});
  AggregatorConfig cfg;
  cfg.geomedIterations = 200;
  cfg.geomedEps = 1e-12;
  const AggregateResult r = run(AggregatorKind::Geomed, u, kEqual, cfg);
  EXPECT_NEAR(r.aggregate[1], 0.5, 1e-6);
  EXPECT_GT(r.aggregate[0], 0.75);
  EXPECT_LT(r.aggregate[0], 0.85);
  for (int k = 0; k < 4; ++k) EXPECT_LT(r.weight[4], r.weight[static_cast<std::size_t>(k)]);
}

TEST(Aggregator, CenteredClipOneStepFromTheCentre) {
  // Centre (0, 0), tau = 1: (3, 4) is clipped by 1/5 to (0.6, 0.8), (0.5, 0) is kept; v = their mean.
  AggregatorConfig cfg;
  cfg.clipTau = 1.0;
  cfg.clipIterations = 1;
  const AggregateResult r = run(AggregatorKind::CenteredClip, matrix({{3, 4}, {0.5f, 0}}), {1, 1}, cfg, {0.0, 0.0});
  EXPECT_NEAR(r.aggregate[0], 0.5 * (0.6 + 0.5), 1e-15);
  EXPECT_NEAR(r.aggregate[1], 0.5 * 0.8, 1e-15);
  EXPECT_DOUBLE_EQ(r.weight[0], 0.2);
  EXPECT_DOUBLE_EQ(r.weight[1], 1.0);
  // From another centre the clipping is about that centre: (3, 4) is within tau of (3, 3.5).
  const AggregateResult moved = run(AggregatorKind::CenteredClip, matrix({{3, 4}, {3, 3}}), {1, 1}, cfg, {3.0, 3.5});
  EXPECT_DOUBLE_EQ(moved.aggregate[1], 3.5);
}

TEST(Aggregator, CenteredClipWithALargeRadiusIsTheMean) {
  AggregatorConfig cfg;
  cfg.clipTau = 1e30;
  const std::vector<double> w = {1, 2, 3, 4, 5};
  const AggregateResult c = run(AggregatorKind::CenteredClip, matrix(kRows), w, cfg, {0.0, 0.0, 0.0});
  const AggregateResult m = run(AggregatorKind::Mean, matrix(kRows), w);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(c.aggregate[i], m.aggregate[i], 1e-12);
}

namespace {

// Krum's selection as the paper defines it, computed directly: every pairwise distance in double,
// each score the sum of the K - f - 2 least, the m least scores (ties: lower row).
std::vector<char> directKrumSelection(const UpdateMatrix& u, int f, int m) {
  const int K = u.rows;
  std::vector<double> scores;
  for (int i = 0; i < K; ++i) {
    std::vector<double> others;
    for (int j = 0; j < K; ++j)
      if (j != i) others.push_back(squaredDistance(u.row(i), u.row(j), u.cols));
    std::sort(others.begin(), others.end());
    double s = 0.0;
    for (int q = 0; q < K - f - 2; ++q) s += others[static_cast<std::size_t>(q)];
    scores.push_back(s);
  }
  std::vector<int> order(static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k) order[static_cast<std::size_t>(k)] = k;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return scores[static_cast<std::size_t>(a)] < scores[static_cast<std::size_t>(b)];
  });
  std::vector<char> chosen(static_cast<std::size_t>(K), 0);
  for (int r = 0; r < m; ++r) chosen[static_cast<std::size_t>(order[static_cast<std::size_t>(r)])] = 1;
  return chosen;
}

// K rows of n values around a common base (large against the spread where offset >> spread:
// cancellation), each odd row a twin of the row before, one value moved by one float ulp. A twin's
// score then differs from its partner's far below the Gram matrix's float error but well above the
// double computation's, so choosing between twins (Krum, or a multi-Krum cut inside a pair) is
// decided by the exact recomputation alone.
UpdateMatrix clusteredRows(int K, std::size_t n, float offset, float spread, unsigned seed) {
  UpdateMatrix u(K, n);
  unsigned state = seed;
  auto uniform = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / 16777216.0f - 0.5f;
  };
  std::vector<float> base(n);
  for (float& b : base) b = offset * (1.0f + 0.01f * uniform());
  for (int k = 0; k < K; ++k) {
    float* x = u.row(k);
    if (k % 2 == 1) {
      std::copy_n(u.row(k - 1), n, x);
      const std::size_t at = static_cast<std::size_t>(k) * 31u % n;
      x[at] = std::nextafter(x[at], std::numeric_limits<float>::infinity());
      continue;
    }
    const float scale = spread * (1.0f + 0.3f * static_cast<float>((k / 2 * 7 + static_cast<int>(seed)) % 5));
    for (std::size_t i = 0; i < n; ++i) x[i] = base[i] + scale * uniform();
  }
  return u;
}

}  // namespace

// The Gram-matrix distances with their error bounds choose what the direct double computation chooses,
// on random rows with a large common part (cancellation), exact duplicates (ties) and near-duplicates
// (scores that differ in the last bits).
TEST(Aggregator, KrumAndMultiKrumChooseAsTheDirectComputation) {
  struct Case {
    int K, f, m;
    std::size_t n;
    float offset, spread;
  };
  for (const Case& c :
       {Case{7, 2, 1, 300, 0.0f, 1.0f}, Case{23, 5, 1, 1000, 100.0f, 1e-3f}, Case{23, 5, 9, 1000, 100.0f, 1e-3f},
        Case{23, 5, 7, 1000, 0.0f, 1.0f}, Case{40, 8, 32, 2049, 1.0f, 1.0f}, Case{40, 8, 1, 513, 1e3f, 1e-4f}}) {
    for (unsigned seed : {1u, 2u, 3u}) {
      const UpdateMatrix u = clusteredRows(c.K, c.n, c.offset, c.spread, seed);
      AggregatorConfig cfg;
      cfg.byzantine = c.f;
      cfg.krumM = c.m;
      const std::vector<double> w(static_cast<std::size_t>(c.K), 1.0);
      const AggregateResult r = run(c.m == 1 ? AggregatorKind::Krum : AggregatorKind::MultiKrum, u, w, cfg);
      const std::vector<char> direct = directKrumSelection(u, c.f, c.m);
      EXPECT_EQ(r.selected, direct) << "K " << c.K << " m " << c.m << " seed " << seed;
      // By column blocks (robust/block_sums.hpp): the partial Gram matrices and direct distances of
      // narrower blocks, summed in block order, choose the same.
      cfg.kind = c.m == 1 ? AggregatorKind::Krum : AggregatorKind::MultiKrum;
      for (std::size_t width : {std::size_t{1}, std::size_t{100}, std::size_t{128}, std::size_t{333}})
        EXPECT_EQ(aggregateBySummedBlocks(cfg, AggregateInput{u, w, {}}, width).selected, direct)
            << "K " << c.K << " m " << c.m << " seed " << seed << " width " << width;
    }
  }
}

// Identical rows tie exactly: the lower rows are chosen.
TEST(Aggregator, KrumBreaksExactTiesByTheLowerRow) {
  const std::vector<float> x = {0.25f, -1.0f, 3.0f};
  AggregatorConfig cfg;
  cfg.byzantine = 1;
  cfg.krumM = 2;
  const AggregateResult r = run(AggregatorKind::MultiKrum, matrix({{9, 9, 9}, x, x, x, x}), kEqual, cfg);
  EXPECT_EQ(r.selected, (std::vector<char>{0, 1, 1, 0, 0}));
}
