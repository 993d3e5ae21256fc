// PLayer-FL's pure pieces: the layer sensitivity against a hand computation, the curve and the split
// rule on constructed values, the prefix-masked aggregation, and the server step of the algorithm.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "comm/placement.hpp"
#include "core/types.hpp"
#include "fl/aggregation.hpp"
#include "fl/algorithms/playerfl.hpp"
#include "fl/algorithms/playerfl_random.hpp"
#include "fl/local_trainer.hpp"
#include "nn/dense.hpp"

namespace fedsilo {
namespace {

// 2 -> 2 (fc1) -> ReLU -> 2 (fc2), softmax cross-entropy; hand-set parameters.
struct TinyNet {
  Model model{Shape{2, 1, 1}, 2};
  // fc1: W1 [2][2], b1[2]; fc2: W2 [2][2], b2[2] (row-major [out][in], then bias).
  double W1[2][2] = {{0.5, -0.3}, {0.8, 0.2}}, b1[2] = {0.1, -0.2};
  double W2[2][2] = {{0.7, -0.4}, {-0.6, 0.9}}, b2[2] = {0.05, -0.05};
  TinyNet() {
    model.add(std::make_unique<Dense>(2, 2), "fc1");
    model.add(std::make_unique<Relu>(Shape{2, 1, 1}));
    model.add(std::make_unique<Dense>(2, 2), "fc2");
    model.finalize();
    model.reserve(8);
    float* p = model.params();
    const double vals[12] = {W1[0][0], W1[0][1], W1[1][0], W1[1][1], b1[0], b1[1],
                             W2[0][0], W2[0][1], W2[1][0], W2[1][1], b2[0], b2[1]};
    for (int i = 0; i < 12; ++i) p[i] = static_cast<float>(vals[i]);
  }
};

// One sample x = (1.0, 0.5), label 1; every draw of the sensitivity batch picks it.
Dataset oneSample() {
  Dataset d;
  d.shape = Shape{2, 1, 1};
  d.numClasses = 2;
  d.f32 = {1.0f, 0.5f};
  d.labels = {1};
  return d;
}

TEST(LayerSensitivity, MatchesHandComputation) {
  TinyNet net;
  Dataset data = oneSample();
  LocalTrainer trainer(data, 8);
  // Hand forward/backward in double for x = (1, 0.5), y = 1, batch of 4 copies (mean loss = one sample).
  const double x[2] = {1.0, 0.5};
  double h[2], a[2], z[2];
  for (int i = 0; i < 2; ++i) {
    h[i] = net.W1[i][0] * x[0] + net.W1[i][1] * x[1] + net.b1[i];
    a[i] = h[i] > 0 ? h[i] : 0.0;
  }
  for (int i = 0; i < 2; ++i) z[i] = net.W2[i][0] * a[0] + net.W2[i][1] * a[1] + net.b2[i];
  const double m = std::max(z[0], z[1]);
  const double e0 = std::exp(z[0] - m), e1 = std::exp(z[1] - m);
  const double dz[2] = {e0 / (e0 + e1) - 0.0, e1 / (e0 + e1) - 1.0};
  double gW2[2][2], gb2[2], gW1[2][2], gb1[2], da[2];
  for (int i = 0; i < 2; ++i) {
    gb2[i] = dz[i];
    for (int j = 0; j < 2; ++j) gW2[i][j] = dz[i] * a[j];
  }
  for (int j = 0; j < 2; ++j) da[j] = net.W2[0][j] * dz[0] + net.W2[1][j] * dz[1];
  for (int i = 0; i < 2; ++i) {
    const double dh = h[i] > 0 ? da[i] : 0.0;
    gb1[i] = dh;
    for (int j = 0; j < 2; ++j) gW1[i][j] = dh * x[j];
  }
  auto meanSq = [](const double* th, const double* g, int n) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += (th[i] * g[i]) * (th[i] * g[i]);
    return s / n;
  };
  const double sW1 = meanSq(&net.W1[0][0], &gW1[0][0], 4), sB1 = meanSq(net.b1, gb1, 2);
  const double sW2 = meanSq(&net.W2[0][0], &gW2[0][0], 4), sB2 = meanSq(net.b2, gb2, 2);
  ASSERT_GT(sW1, 0.0);
  ASSERT_GT(sW2, 0.0);

  const IndexList idx{0};
  std::vector<double> s = layerSensitivity(net.model, trainer, idx, 4, 7, 0, 0, false);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_NEAR(s[0], sW1, 1e-6 * sW1);
  EXPECT_NEAR(s[1], sW2, 1e-6 * sW2);
  // With biases: the mean over the block's two tensors.
  std::vector<double> sb = layerSensitivity(net.model, trainer, idx, 4, 7, 0, 0, true);
  EXPECT_NEAR(sb[0], 0.5 * (sW1 + sB1), 1e-6 * sb[0]);
  EXPECT_NEAR(sb[1], 0.5 * (sW2 + sB2), 1e-6 * sb[1]);
  // The parameters are not changed by measuring.
  EXPECT_EQ(net.model.params()[0], 0.5f);
}

TEST(FederationCurve, NormalisesByFirstLayerCumulatesAndAverages) {
  // Two clients, L = 3: s = (2, 4, 8) -> (1, 3, 7); s = (1, 1, 10) -> (1, 2, 12); mean (1, 2.5, 9.5).
  int used = -1;
  std::vector<double> F = federationCurve({2, 4, 8, 1, 1, 10}, 3, &used);
  ASSERT_EQ(F.size(), 3u);
  EXPECT_EQ(used, 2);
  EXPECT_DOUBLE_EQ(F[0], 1.0);
  EXPECT_DOUBLE_EQ(F[1], 2.5);
  EXPECT_DOUBLE_EQ(F[2], 9.5);
  // A row that cannot be normalised (s_1 = 0, or NaN) is skipped.
  F = federationCurve({0, 4, 8, 1, 1, 10, 1, kNaN, 1}, 3, &used);
  EXPECT_EQ(used, 1);
  EXPECT_DOUBLE_EQ(F[2], 12.0);
  F = federationCurve({0, 1}, 2, &used);
  EXPECT_EQ(used, 0);
  EXPECT_TRUE(std::isnan(F[0]) && std::isnan(F[1]));
}

TEST(RelativeJumpSplit, FirstJumpAboveThreshold) {
  // r = (0.125, 1/3, 2, 1/9): only l = 3 exceeds t = 1 -> federate 3 blocks.
  const std::vector<double> F{1.0, 1.125, 1.5, 4.5, 5.0};
  EXPECT_EQ(relativeJumpSplit(F, 1.0), 3);
  // Smallest qualifying l wins: with t = 0.1 the first jump (r_1 = 0.125) already qualifies.
  EXPECT_EQ(relativeJumpSplit(F, 0.1), 1);
  // r_2 = 1/3 > 0.2 but r_1 = 0.125 is not.
  EXPECT_EQ(relativeJumpSplit(F, 0.2), 2);
  // Strictly greater: r_3 = 4.5/1.5 - 1 = 2 exactly at t = 2 does not qualify, nor does r_4.
  EXPECT_EQ(relativeJumpSplit(F, 2.0), 4);
  // No jump above t: all but the last block.
  EXPECT_EQ(relativeJumpSplit(F, 100.0), 4);
  EXPECT_EQ(relativeJumpSplit({1.0, 1.5}, 1.0), 1);
  EXPECT_EQ(relativeJumpSplit({1.0, 3.5}, 1.0), 1);
  // Non-finite curve: all but the last.
  EXPECT_EQ(relativeJumpSplit({kNaN, kNaN, kNaN}, 1.0), 2);
}

// Three blocks of sizes 2, 3, 2 and two clients' vectors, reduced with weights 1 and 3.
struct Reduced {
  std::vector<LayerBlock> blocks{{"a", 0, 2, {}}, {"b", 2, 3, {}}, {"c", 5, 2, {}}};
  ExactSum acc{7};
  ServerInput in;
  std::vector<float> v1{1, 2, 3, 4, 5, 6, 7}, v2{5, 6, 7, 8, 9, 10, 11};
  Reduced() {
    acc.addScaled(0, v1.data(), 7, 1.0);
    acc.addScaled(0, v2.data(), 7, 3.0);
    in.acc = &acc;
    in.accOffset = {0, 2, 5};
    in.blockWeightSum = {4.0, 4.0, 4.0};
  }
};

TEST(PrefixWeightedMean, TouchesExactlyTheFederatedBlocks) {
  Reduced r;
  const std::vector<float> before{-1.5f, 2.25f, 3.125f, -0.0f, 1e-30f, 7.75f, -8.5f};
  std::vector<float> g = before;
  applyPrefixWeightedMean(r.in, r.blocks, 2, g);
  for (int i = 0; i < 5; ++i) EXPECT_FLOAT_EQ(g[i], (r.v1[i] + 3 * r.v2[i]) / 4.0f) << i;
  EXPECT_EQ(std::memcmp(g.data() + 5, before.data() + 5, 2 * sizeof(float)), 0);  // block c untouched
  g = before;
  applyPrefixWeightedMean(r.in, r.blocks, 1, g);
  EXPECT_FLOAT_EQ(g[0], 4.0f);
  EXPECT_EQ(std::memcmp(g.data() + 2, before.data() + 2, 5 * sizeof(float)), 0);  // b and c bit-identical
}

// A FlContext over hand-made blocks (no data needed by PlayerFl's setup and server step).
struct FakeContext {
  ExperimentConfig cfg;
  DataBundle data;
  std::vector<ClientData> clients{ClientData{}, ClientData{}};
  Placement placement{2, 1};
  std::unique_ptr<FlContext> ctx;
  explicit FakeContext(const std::vector<LayerBlock>& blocks) {
    ctx.reset(new FlContext{cfg, data, clients, placement, 0, blocks, 7, InputSpec{}});
  }
};

TEST(PlayerFlServer, RoundZeroChoosesSplitAndAveragesOnlyThePrefix) {
  Reduced r;
  FakeContext fc(r.blocks);
  PlayerFl alg(PlayerFlOptions{1.0, PlayerFlSplit::parse("auto"), false});
  std::vector<float> g{-1.5f, 2.25f, 3.125f, -0.0f, 1e-30f, 7.75f, -8.5f};
  const std::vector<float> before = g;
  alg.setup(*fc.ctx, g);
  EXPECT_EQ(alg.split(), 0);
  // Split unknown: round 0 reduces everything.
  EXPECT_EQ(alg.reducedBlocks(*fc.ctx, 0), (std::vector<char>{1, 1, 1}));
  // Curves (1, 1.5, 7) and (1, 1.5, 5): mean (1, 1.5, 6): r_1 = 0.5, r_2 = 3 -> p = 2 at t = 1.
  r.in.round = 0;
  r.in.sensitivityClients = {0, 1};
  r.in.sensitivity = {2, 1, 11, 4, 2, 14};
  alg.serverUpdate(*fc.ctx, r.in, g);
  EXPECT_EQ(alg.split(), 2);
  EXPECT_EQ(alg.playerFlSplit(), 2);
  EXPECT_DOUBLE_EQ(alg.curve()[2], 6.0);
  for (int i = 0; i < 5; ++i) EXPECT_FLOAT_EQ(g[i], (r.v1[i] + 3 * r.v2[i]) / 4.0f);
  EXPECT_EQ(std::memcmp(g.data() + 5, before.data() + 5, 2 * sizeof(float)), 0);
  EXPECT_EQ(alg.reducedBlocks(*fc.ctx, 1), (std::vector<char>{1, 1, 0}));
  // The replicated state carries split and curve to the other ranks.
  PlayerFl other(PlayerFlOptions{1.0, PlayerFlSplit::parse("auto"), false});
  std::vector<float> g2 = before;
  other.setup(*fc.ctx, g2);
  other.setServerState(alg.serverState());
  EXPECT_EQ(other.split(), 2);
  EXPECT_EQ(other.curve(), alg.curve());
  EXPECT_EQ(other.reducedBlocks(*fc.ctx, 1), (std::vector<char>{1, 1, 0}));
  // A later round's (last-round) sensitivity does not move the split.
  r.in.round = 1;
  r.in.sensitivity = {1, 100, 100, 1, 100, 100};
  alg.serverUpdate(*fc.ctx, r.in, g);
  EXPECT_EQ(alg.split(), 2);
}

TEST(PlayerFlServer, ExplicitSplitByNumberOrName) {
  Reduced r;
  FakeContext fc(r.blocks);
  std::vector<float> g(7, 0.0f);
  PlayerFl byName(PlayerFlOptions{1.0, PlayerFlSplit::parse("a"), false});
  byName.setup(*fc.ctx, g);
  EXPECT_EQ(byName.split(), 1);
  EXPECT_EQ(byName.reducedBlocks(*fc.ctx, 0), (std::vector<char>{1, 0, 0}));
  PlayerFl byNumber(PlayerFlOptions{1.0, PlayerFlSplit::parse("2"), false});
  byNumber.setup(*fc.ctx, g);
  EXPECT_EQ(byNumber.split(), 2);
  try {
    PlayerFl bad(PlayerFlOptions{1.0, PlayerFlSplit::parse("conv9"), false});
    bad.setup(*fc.ctx, g);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("playerfl.split = conv9"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a, b, c"), std::string::npos) << e.what();
  }
  EXPECT_THROW(resolveSplit(PlayerFlSplit::parse("4"), r.blocks, "tiny"), ConfigError);
  EXPECT_THROW(resolveSplit(PlayerFlSplit::parse("0"), r.blocks, "tiny"), ConfigError);
  EXPECT_EQ(resolveSplit(PlayerFlSplit::parse("3"), r.blocks, "tiny"), 3);
}

TEST(PlayerFlRandomSplit, DrawsInRangeAndAvoidsPlayerFlSplit) {
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    const int s = drawRandomSplit(seed, 5, 2);
    EXPECT_GE(s, 1);
    EXPECT_LE(s, 4);
    EXPECT_NE(s, 2);
    EXPECT_EQ(s, drawRandomSplit(seed, 5, 2));  // one stream per seed
  }
  // L = 3 with PLayer-FL split 1: only 2 is admissible.
  for (std::uint64_t seed = 0; seed < 20; ++seed) EXPECT_EQ(drawRandomSplit(seed, 3, 1), 2);
  // Every admissible value is reachable.
  std::vector<int> hit(5, 0);
  for (std::uint64_t seed = 0; seed < 200; ++seed) hit[static_cast<std::size_t>(drawRandomSplit(seed, 5, 3))]++;
  EXPECT_GT(hit[1], 0);
  EXPECT_GT(hit[2], 0);
  EXPECT_GT(hit[4], 0);
  EXPECT_EQ(hit[3], 0);
}

TEST(PlayerFlRandomSplit, TooFewBlocksIsAConfigErrorNamingTheModel) {
  std::vector<LayerBlock> two{{"fc1", 0, 4, {}}, {"fc2", 4, 3, {}}};
  FakeContext fc(two);
  fc.cfg.model.name = ModelPreset::Mlp;
  std::vector<float> g(7, 0.0f);
  PlayerFlRandom alg(PlayerFlOptions{1.0, PlayerFlSplit::parse("auto"), false});
  try {
    alg.setup(*fc.ctx, g);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model = mlp"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fedsilo
