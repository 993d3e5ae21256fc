// GEMS building blocks on constructed problems with known answers: the radius search (Algorithm 2),
// surface sampling, the eq (2) intersection, k-means, the greedy neuron merge, Fisher axes, the
// majority vote, penultimate features, and option/protocol validation.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/error.hpp"
#include "fl/algorithms/gems.hpp"
#include "fl/algorithms/gems_math.hpp"
#include "fl/algorithms/one_shot.hpp"
#include "app/config_parser.hpp"
#include "nn/presets.hpp"

using namespace fedsilo;

namespace {

double dist(const std::vector<double>& a, const double* b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s);
}

}  // namespace

// ---- radius search ----------------------------------------------------------------------------

TEST(GemsRadius, FindsTheRadiusOfAGoodEnoughBall) {
  // Q(p) = 1 iff ||p - c|| <= 1.7: every surface point of radius r passes iff r <= 1.7.
  const std::vector<double> c{1.0, 2.0, 3.0};
  Rng rng(7, 0, -1, Purpose::Gems);
  const RadiusSearchOptions opt{4.0, 1e-3, 50};
  const RadiusSearchResult r = searchRadius(c, opt, SurfaceGeometry{}, rng, [&](const std::vector<double>& p) {
    return dist(p, c.data()) <= 1.7 + 1e-12;
  });
  EXPECT_TRUE(r.centerPasses);
  EXPECT_LE(r.radius, 1.7);
  EXPECT_GE(r.radius, 1.7 - opt.tol);
  EXPECT_EQ(r.bisections, static_cast<int>(std::ceil(std::log2(4.0 / 1e-3))));
}

TEST(GemsRadius, HalfSpaceBoundaryIsFoundBySampling) {
  // Q(p) = 1 iff p_0 - c_0 <= 0.3: the sphere of radius r fails iff some sample has r u_0 > 0.3; with
  // 4000 samples on the circle max u_0 > 0.9999, so the answer is 0.3 up to the tolerance.
  const std::vector<double> c{-2.0, 5.0};
  Rng rng(1, 3, -1, Purpose::Gems);
  const RadiusSearchOptions opt{10.0, 1e-4, 4000};
  const RadiusSearchResult r =
      searchRadius(c, opt, SurfaceGeometry{}, rng, [&](const std::vector<double>& p) { return p[0] - c[0] <= 0.3; });
  EXPECT_NEAR(r.radius, 0.3, 2e-4);
  EXPECT_LE(r.radius, 0.3 + 1e-4);
}

TEST(GemsRadius, StopsAtTheFirstFailingSample) {
  // Only the centre passes: every candidate radius must fail on its first sample.
  const std::vector<double> c{0.0, 0.0, 0.0, 0.0};
  Rng rng(2, 0, -1, Purpose::Gems);
  long long calls = 0;
  const RadiusSearchResult r = searchRadius(c, RadiusSearchOptions{100.0, 0.5, 500}, SurfaceGeometry{}, rng,
                                            [&](const std::vector<double>& p) {
                                              ++calls;
                                              return dist(p, c.data()) == 0.0;
                                            });
  EXPECT_EQ(r.radius, 0.0);
  EXPECT_EQ(calls, 1 + r.bisections);
  EXPECT_EQ(r.evaluations, calls);
}

TEST(GemsRadius, FailingCentreGivesRadiusZeroWithoutSearching) {
  const std::vector<double> c{0.0, 0.0};
  Rng rng(2, 0, -1, Purpose::Gems);
  const RadiusSearchResult r =
      searchRadius(c, RadiusSearchOptions{}, SurfaceGeometry{}, rng, [](const std::vector<double>&) { return false; });
  EXPECT_FALSE(r.centerPasses);
  EXPECT_EQ(r.radius, 0.0);
  EXPECT_EQ(r.evaluations, 1);
}

TEST(GemsRadius, EllipsoidAxesScaleTheRadius) {
  // Offsets are r * (0.25 u_0, u_1): |offset_0| <= 0.5 limits r to 2, |offset_1| <= 10 to 10.
  const std::vector<double> c{3.0, -1.0};
  SurfaceGeometry g;
  g.axes = {0.25, 1.0};
  Rng rng(4, 1, -1, Purpose::Gems);
  const RadiusSearchResult r = searchRadius(c, RadiusSearchOptions{50.0, 1e-3, 3000}, g, rng, [&](const std::vector<double>& p) {
    return std::fabs(p[0] - c[0]) <= 0.5 && std::fabs(p[1] - c[1]) <= 10.0;
  });
  EXPECT_NEAR(r.radius, 2.0, 5e-3);
}

TEST(GemsRadius, MaskedCoordinatesAreNotPerturbed) {
  const std::vector<double> c{1.0, 2.0, 3.0};
  SurfaceGeometry g;
  g.mask = {1, 0, 0};
  Rng rng(5, 0, -1, Purpose::Gems);
  const RadiusSearchResult r = searchRadius(c, RadiusSearchOptions{4.0, 1e-3, 20}, g, rng, [&](const std::vector<double>& p) {
    EXPECT_EQ(p[1], 2.0);
    EXPECT_EQ(p[2], 3.0);
    return std::fabs(p[0] - 1.0) <= 0.7;
  });
  EXPECT_NEAR(r.radius, 0.7, 1e-3);
}

TEST(GemsRadius, SurfacePointsLieOnTheEllipsoid) {
  const std::vector<double> c{1.0, -2.0, 0.5, 4.0};
  SurfaceGeometry g;
  g.axes = {1.0, 0.1, 0.5, 2.0};
  Rng rng(9, 2, -1, Purpose::Gems);
  std::vector<double> p;
  for (int t = 0; t < 20; ++t) {
    sampleSurface(c, 3.0, g, rng, p);
    double s = 0.0;
    for (int i = 0; i < 4; ++i) s += std::pow((p[i] - c[i]) / (g.axes[i] * 3.0), 2);
    EXPECT_NEAR(s, 1.0, 1e-12);
  }
}

TEST(GemsRadius, SameStreamSameRadius) {
  const std::vector<double> c{0.5, 0.5, 0.5};
  auto run = [&] {
    Rng rng(11, 4, -1, Purpose::Gems);
    return searchRadius(c, RadiusSearchOptions{5.0, 1e-3, 30}, SurfaceGeometry{}, rng,
                        [](const std::vector<double>& p) { return p[0] + p[1] <= 2.0; })
        .radius;
  };
  EXPECT_EQ(run(), run());
}

// ---- intersection, eq (2) -----------------------------------------------------------------------

TEST(GemsIntersect, IntersectingBallsGiveAPointInsideEveryBall) {
  // Two balls meet in a lens around (5, 0) of half-height 1.43; the third admits only y >= 1. The
  // mean of the centres (5, 10) is outside the first two balls.
  BallSet b;
  b.d = 2;
  b.centers = {0.0, 0.0, 10.0, 0.0, 5.0, 30.0};
  b.radii = {5.2, 5.2, 29.0};
  EXPECT_GT(intersectionObjective(b, {5.0, 10.0}), 0.0);
  const IntersectResult r = intersectBalls(b, IntersectOptions{0.01, 20000});
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.objective, 0.0);
  for (int k = 0; k < 3; ++k) EXPECT_LE(dist(r.w, b.centers.data() + 2 * k), b.radii[k] + 1e-6) << "ball " << k;
}

TEST(GemsIntersect, HighDimensionalBallsAroundACommonPoint) {
  const int d = 40, K = 6;
  Rng rng(3, -1, -1, Purpose::Misc);
  std::vector<double> x0(d);
  for (auto& v : x0) v = rng.normal();
  BallSet b;
  b.d = d;
  for (int k = 0; k < K; ++k) {
    std::vector<double> c(d);
    for (int i = 0; i < d; ++i) c[i] = x0[i] + 4.0 * rng.normal();
    b.centers.insert(b.centers.end(), c.begin(), c.end());
    b.radii.push_back(dist(c, x0.data()) * 0.8 + 1.0);  // contains x0 only if 0.8 dist + 1 >= dist
  }
  // Make sure x0 is inside every ball (construction check), so an intersection exists.
  for (int k = 0; k < K; ++k)
    if (dist(x0, b.centers.data() + static_cast<std::size_t>(k) * d) > b.radii[k])
      b.radii[k] = dist(x0, b.centers.data() + static_cast<std::size_t>(k) * d) + 0.5;
  const IntersectResult r = intersectBalls(b, IntersectOptions{0.01, 50000});
  ASSERT_TRUE(r.found);
  for (int k = 0; k < K; ++k)
    EXPECT_LE(dist(r.w, b.centers.data() + static_cast<std::size_t>(k) * d), b.radii[k] + 1e-6) << "ball " << k;
}

TEST(GemsIntersect, DisjointBallsAreReportedNotFound) {
  BallSet b;
  b.d = 2;
  b.centers = {0.0, 0.0, 10.0, 0.0};
  b.radii = {2.0, 2.0};
  const IntersectResult r = intersectBalls(b, IntersectOptions{0.01, 2000});
  EXPECT_FALSE(r.found);
  EXPECT_GE(r.objective, 6.0 - 1e-9);  // ||c1 - w|| + ||c2 - w|| >= 10 for every w
  EXPECT_NEAR(r.objective, 6.0, 1e-6);  // attained on the segment, where it starts
}

TEST(GemsIntersect, EllipsoidsUseTheirAxes) {
  // Ellipsoid 1: centre 0, axes (4, 0.5) * r=1; ellipsoid 2: centre (6.5, 0), axes (3, 3). As spheres
  // of radius 1 they would not meet; as ellipsoids they overlap for x in [3.5, 4]; the mean of the
  // centres (3.25, 0) is outside the second.
  BallSet b;
  b.d = 2;
  b.centers = {0.0, 0.0, 6.5, 0.0};
  b.radii = {1.0, 1.0};
  b.axes = {4.0, 0.5, 3.0, 3.0};
  const IntersectResult r = intersectBalls(b, IntersectOptions{0.01, 20000});
  ASSERT_TRUE(r.found);
  for (int k = 0; k < 2; ++k) {
    double s = 0.0;
    for (int i = 0; i < 2; ++i) s += std::pow((r.w[i] - b.centers[2 * k + i]) / b.axes[2 * k + i], 2);
    EXPECT_LE(std::sqrt(s), 1.0 + 1e-9);
  }
}

TEST(GemsIntersect, MeanIsReturnedWhenAlreadyInside) {
  BallSet b;
  b.d = 3;
  b.centers = {0, 0, 0, 1, 1, 1};
  b.radii = {2.0, 2.0};
  const IntersectResult r = intersectBalls(b, IntersectOptions{});
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.steps, 0);
  EXPECT_EQ(r.w, (std::vector<double>{0.5, 0.5, 0.5}));
}

// ---- Fisher axes --------------------------------------------------------------------------------

TEST(GemsFisher, AxesFromFisherValues) {
  // a = 1/(|F| + 1e-5) = (1e5, ~1, ~990), / max = (1, 1e-5, 0.0099), floored at 0.1.
  const std::vector<double> a = fisherAxes({0.0, 1.0, -1e-3});
  ASSERT_EQ(a.size(), 3u);
  EXPECT_DOUBLE_EQ(a[0], 1.0);
  EXPECT_DOUBLE_EQ(a[1], 0.1);
  EXPECT_DOUBLE_EQ(a[2], 0.1);
  const std::vector<double> b = fisherAxes({1e-6, 2e-6});
  EXPECT_DOUBLE_EQ(b[0], 1.0);
  EXPECT_NEAR(b[1], (1.0 / 1.2e-5) / (1.0 / 1.1e-5), 1e-12);
}

TEST(GemsFisher, MaskKeepsTheTopFraction) {
  EXPECT_TRUE(fisherMask({1, 2, 3}, 1.0).empty());
  const std::vector<char> m = fisherMask({0.5, 3.0, 0.1, 2.0}, 0.5);
  EXPECT_EQ(m, (std::vector<char>{0, 1, 0, 1}));
  EXPECT_EQ(fisherMask({1.0, 1.0, 1.0}, 0.01), (std::vector<char>{1, 0, 0}));
}

// ---- k-means and the neuron merge -------------------------------------------------------------

TEST(GemsKMeans, SeparatesWellSeparatedBlobs) {
  const int per = 15, dim = 4, blobs = 3;
  Rng gen(5, -1, -1, Purpose::Misc);
  std::vector<double> pts;
  // Blobs interleaved in index order so that a trivial split by index would fail.
  for (int i = 0; i < per; ++i)
    for (int b = 0; b < blobs; ++b)
      for (int j = 0; j < dim; ++j) pts.push_back(100.0 * b * (j == b ? 1.0 : 0.3) + 0.5 * gen.normal());
  const int n = per * blobs;
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    Rng rng(seed, -1, -1, Purpose::KMeans);
    const std::vector<int> a = kMeans(pts, n, dim, blobs, rng, 100);
    std::set<int> labels;
    for (int b = 0; b < blobs; ++b) {
      for (int i = 0; i < per; ++i) EXPECT_EQ(a[i * blobs + b], a[b]) << "seed " << seed << " blob " << b;
      labels.insert(a[b]);
    }
    EXPECT_EQ(labels.size(), 3u);
    Rng again(seed, -1, -1, Purpose::KMeans);
    EXPECT_EQ(kMeans(pts, n, dim, blobs, again, 100), a);
  }
}

TEST(GemsKMeans, MoreClustersThanPoints) {
  Rng rng(1, -1, -1, Purpose::KMeans);
  EXPECT_EQ(kMeans({0, 0, 1, 1}, 2, 2, 5, rng, 10), (std::vector<int>{0, 1}));
}

TEST(GemsMerge, MergesWithinEveryClusterIncludingClusterZero) {
  // Cluster 0: three balls around (0, 0) that pairwise intersect, one far ball; cluster 1: one ball.
  BallSet n;
  n.d = 2;
  n.centers = {0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 50.0, 50.0, -20.0, 3.0};
  n.radii = {1.0, 1.0, 1.0, 0.5, 0.5};
  const std::vector<int> cluster{0, 0, 0, 0, 1};
  const NeuronMergeResult m = mergeNeurons(n, cluster, 2, IntersectOptions{0.01, 10000});
  EXPECT_EQ(m.width, 3);  // merged (0,1,2), the far neuron, the lone neuron of cluster 1
  EXPECT_EQ(m.mergedGroups, 1);
  EXPECT_EQ(m.mergedFound, 1);
  EXPECT_EQ(m.groupOf[0], m.groupOf[1]);
  EXPECT_EQ(m.groupOf[0], m.groupOf[2]);
  EXPECT_NE(m.groupOf[3], m.groupOf[0]);
  EXPECT_NE(m.groupOf[4], m.groupOf[0]);
  const double* merged = m.neurons.data() + 2 * m.groupOf[0];
  for (int i = 0; i < 3; ++i) {
    const std::vector<double> c(n.centers.begin() + 2 * i, n.centers.begin() + 2 * i + 2);
    EXPECT_LE(dist(c, merged), n.radii[i] + 1e-6);
  }
  // Unmerged neurons are kept exactly.
  EXPECT_EQ(m.neurons[2 * m.groupOf[3]], 50.0);
  EXPECT_EQ(m.neurons[2 * m.groupOf[4]], -20.0);
  EXPECT_EQ(m.neurons[2 * m.groupOf[4] + 1], 3.0);
}

TEST(GemsMerge, NeuronThatMissesOneMemberStaysAlone) {
  // Ball 2 intersects ball 1 but not ball 0: it does not join the set {0, 1}.
  BallSet n;
  n.d = 1;
  n.centers = {0.0, 1.5, 3.0};
  n.radii = {1.0, 1.0, 1.0};
  const NeuronMergeResult m = mergeNeurons(n, {0, 0, 0}, 1, IntersectOptions{0.01, 10000});
  EXPECT_EQ(m.width, 2);
  EXPECT_EQ(m.groupOf[0], m.groupOf[1]);
  EXPECT_NE(m.groupOf[2], m.groupOf[0]);
  EXPECT_EQ(m.neurons[m.groupOf[2]], 3.0);
}

// ---- ensemble vote -----------------------------------------------------------------------------

TEST(OneShotVote, MajorityWithRandomTieBreak) {
  const std::vector<std::vector<std::int32_t>> votes{{0, 1, 2, 3}, {0, 1, 1, 4}, {1, 2, 1, 5}};
  Rng tie(1, -1, -1, Purpose::Tie);
  const std::vector<std::int32_t> v = majorityVote(votes, 6, tie);
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[1], 1);
  EXPECT_EQ(v[2], 1);
  EXPECT_TRUE(v[3] == 3 || v[3] == 4 || v[3] == 5);
  // The tie-break is random: over many three-way ties every candidate wins sometimes.
  std::vector<std::vector<std::int32_t>> many(3, std::vector<std::int32_t>(300));
  for (int i = 0; i < 300; ++i) {
    many[0][i] = 0;
    many[1][i] = 1;
    many[2][i] = 2;
  }
  Rng t2(2, -1, -1, Purpose::Tie);
  std::vector<int> wins(3, 0);
  for (auto p : majorityVote(many, 3, t2)) ++wins[p];
  for (int c = 0; c < 3; ++c) EXPECT_GT(wins[c], 60) << "class " << c;
}

// ---- features -------------------------------------------------------------------------------------

TEST(GemsFeatures, PenultimateFeaturesAreTheHiddenActivations) {
  ModelConfig mc;
  mc.name = ModelPreset::Mlp;
  mc.hidden = {4};
  auto m = buildModel<float>(mc, InputSpec{Shape{3, 1, 1}, 2, 0});
  m->reserve(2);  // smaller than the sample count: several chunks
  Rng init(1, -1, -1, Purpose::Init);
  m->initialize(init);
  Dataset ds;
  ds.shape = Shape{3, 1, 1};
  ds.numClasses = 2;
  Rng gen(2, -1, -1, Purpose::Misc);
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 3; ++j) ds.f32.push_back(static_cast<float>(gen.normal()));
    ds.labels.push_back(i % 2);
  }
  Dataset out;
  penultimateFeatures(*m, ds, IndexList{4, 0, 2}, out);
  ASSERT_EQ(out.dim(), 4);
  ASSERT_EQ(out.size(), 3);
  const float* W = m->params();  // fc1 weight [4][3], then bias [4]
  const float* b = W + 12;
  const Index order[] = {4, 0, 2};
  for (int s = 0; s < 3; ++s) {
    EXPECT_EQ(out.labels[s], ds.labels[order[s]]);
    for (int h = 0; h < 4; ++h) {
      double a = b[h];
      for (int j = 0; j < 3; ++j) a += W[h * 3 + j] * ds.f32[order[s] * 3 + j];
      EXPECT_NEAR(out.f32[s * 4 + h], std::max(a, 0.0), 1e-5);
    }
  }
}

TEST(GemsFeatures, FisherIsNonNegativeAndZeroForUnusedInputs) {
  ModelConfig mc;
  mc.name = ModelPreset::Logreg;
  auto m = buildModel<float>(mc, InputSpec{Shape{3, 1, 1}, 3, 0});
  m->reserve(4);
  Rng init(1, -1, -1, Purpose::Init);
  m->initialize(init);
  Dataset ds;
  ds.shape = Shape{3, 1, 1};
  ds.numClasses = 3;
  for (int i = 0; i < 8; ++i) {
    ds.f32.insert(ds.f32.end(), {static_cast<float>(i) / 8.0f, 0.0f, 1.0f});  // feature 1 is always 0
    ds.labels.push_back(i % 3);
  }
  LocalTrainer tr(ds, 4);
  Rng rng(3, 0, -1, Purpose::Gems, 1);
  const std::vector<double> F = diagonalFisher(*m, tr, ds, allIndices(8), 0, m->numParams(), 200, rng);
  ASSERT_EQ(F.size(), 12u);
  for (double f : F) EXPECT_GE(f, 0.0);
  for (int c = 0; c < 3; ++c) EXPECT_EQ(F[c * 3 + 1], 0.0) << "weight of the zero input, class " << c;
  double bias = 0.0;
  for (int c = 0; c < 3; ++c) bias += F[9 + c];
  EXPECT_GT(bias, 0.0);
}

// ---- options and protocol ------------------------------------------------------------------------

TEST(GemsConfig, ValidatesOptionsAndRounds) {
  auto parse = [](std::vector<std::string> extra) {
    std::vector<std::string> a{"--algorithm", "gems", "--model", "logreg", "--rounds", "1"};
    a.insert(a.end(), extra.begin(), extra.end());
    return parseArguments(a).config;
  };
  EXPECT_NO_THROW(parse({}));
  try {
    parse({"--gems.shape", "cube"});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("gems.shape = cube"), std::string::npos) << e.what();
  }
  try {
    parse({"--gems.epsilon", "1.5"});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("gems.epsilon = 1.5"), std::string::npos) << e.what();
  }
  try {
    parseArguments({"--algorithm", "gems", "--model", "logreg", "--rounds", "3"});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("rounds = 3"), std::string::npos) << e.what();
  }
  // Neuron-wise GEMS: two protocol rounds, an mlp with one hidden layer.
  EXPECT_THROW(parseArguments({"--algorithm", "gems", "--model", "mlp", "--model.hidden", "20", "--rounds", "1"}),
               ConfigError);
  EXPECT_NO_THROW(parseArguments({"--algorithm", "gems", "--model", "mlp", "--model.hidden", "20", "--rounds", "2"}));
  EXPECT_THROW(parseArguments({"--algorithm", "gems", "--model", "mlp", "--model.hidden", "20,20", "--rounds", "1",
                               "--gems.mode", "neuron"}),
               ConfigError);
  EXPECT_NO_THROW(parseArguments({"--algorithm", "gems", "--model", "mlp", "--model.hidden", "20,20", "--rounds", "1"}));
  for (const char* alg : {"average", "ensemble", "oneshot_local", "global", "public_only"}) {
    EXPECT_THROW(parseArguments({"--algorithm", alg, "--rounds", "2"}), ConfigError) << alg;
    EXPECT_NO_THROW(parseArguments({"--algorithm", alg, "--rounds", "1"})) << alg;
  }
  EXPECT_THROW(parseArguments({"--algorithm", "average", "--rounds", "1", "--fl.clients_per_round", "3"}), ConfigError);
  EXPECT_THROW(parseArguments({"--algorithm", "average", "--rounds", "1", "--gems.finetune_sizes", ""}), ConfigError);
}
