// The robust aggregators against hand-computed small cases, and the reductions to the mean.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "robust/aggregator.hpp"

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
