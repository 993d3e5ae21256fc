// Client-level DP's round step (fl/client_privacy.hpp) against its formulas: the clipped update over
// the blocks a client sends, the noise share, the fixed-denominator mean with central noise, the
// accountant's charge (also with dropouts under distributed noise), adaptive clipping and the state
// a checkpoint carries.
#include "fl/client_privacy.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "app/config_parser.hpp"
#include "privacy/client_dp.hpp"
#include "support/memory_archive.hpp"

namespace fedsilo {
namespace {

ExperimentConfig config(std::vector<std::string> extra) {
  std::vector<std::string> args{"--clients", "20", "--fl.clients_per_round", "5", "--privacy.level", "client",
                                "--privacy.noise_multiplier", "1.5", "--privacy.clip", "0.5", "--seed", "3"};
  args.insert(args.end(), extra.begin(), extra.end());
  return parseArguments(args).config;
}

std::vector<LayerBlock> twoBlocks() { return {LayerBlock{"a", 0, 3, {}}, LayerBlock{"b", 3, 2, {}}}; }

double norm(const float* x, std::size_t n) { return l2Norm(x, n); }

TEST(ClientLevelDp, ClipsTheUpdateOverTheSentBlocksAndSendsItWithWeightOne) {
  const ExperimentConfig cfg = config({});
  const std::vector<LayerBlock> blocks = twoBlocks();
  ClientLevelDp dp(cfg, blocks);
  const std::vector<float> global{1, 1, 1, 1, 1};
  const std::vector<float> model{4, 5, 1, 9, 9};  // update (3, 4, 0) on block a: norm 5
  ClientUpdate u;
  u.vector = model.data();
  u.blockWeight = {120.0, 0.0};  // block b not sent
  dp.privatize(4, 0, 5, {1, 1}, global, u);
  EXPECT_EQ(u.blockWeight, (std::vector<double>{1.0, 1.0}));
  EXPECT_NEAR(u.vector[0], 0.3, 1e-7);  // (3, 4, 0) * 0.5 / 5
  EXPECT_NEAR(u.vector[1], 0.4, 1e-7);
  EXPECT_EQ(u.vector[2], 0.0f);
  EXPECT_EQ(u.vector[3], 0.0f);  // an unsent block is a zero update
  EXPECT_EQ(u.vector[4], 0.0f);
  // A short update is not scaled, and blocks that are not reduced are left out entirely.
  const std::vector<float> near{1.1f, 1, 1, 0.9f, 1};
  u.vector = near.data();
  u.blockWeight = {1.0, 1.0};
  dp.privatize(4, 0, 5, {1, 0}, global, u);
  EXPECT_NEAR(u.vector[0], 0.1, 1e-6);
  EXPECT_EQ(u.vector[3], 0.0f);
  EXPECT_EQ(u.blockWeight, (std::vector<double>{1.0, 0.0}));
  EXPECT_LE(norm(u.vector, 5), 0.5 + 1e-7);
}

TEST(ClientLevelDp, ClientsPlacementAddsTheClientsKeyedShare) {
  const std::vector<LayerBlock> blocks = twoBlocks();
  const ExperimentConfig central = config({}), distributed = config({"--privacy.noise_placement", "clients"});
  ClientLevelDp a(central, blocks), b(distributed, blocks);
  const std::vector<float> global{0, 0, 0, 0, 0}, model{0.1f, 0, 0, 0, 0.2f};
  ClientUpdate ua, ub;
  ua.vector = ub.vector = model.data();
  ua.blockWeight = ub.blockWeight = {1.0, 1.0};
  a.privatize(7, 2, 4, {1, 1}, global, ua);
  b.privatize(7, 2, 4, {1, 1}, global, ub);
  std::vector<float> share(5, 0.0f);
  Rng rng = clientNoiseRng(3, 7, 2);
  const double shareStd = 1.5 * 0.5 / std::sqrt(4.0);
  addGaussianNoise(share.data(), 3, shareStd, rng);
  addGaussianNoise(share.data() + 3, 2, shareStd, rng);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(ub.vector[i] - ua.vector[i], share[i], 1e-6) << i;
}

TEST(ClientLevelDp, TheServerSeesTheNoisedSumOverTheExpectedClients) {
  const ExperimentConfig cfg = config({});  // q = 5/20: 5 expected clients
  const std::vector<LayerBlock> blocks = twoBlocks();
  ClientLevelDp dp(cfg, blocks);
  const std::vector<float> global{1, 2, 3, 4, 5};
  ExactSum acc(5 + 2);
  for (int i = 0; i < 5; ++i) acc.add(static_cast<std::size_t>(i), 0.25 * i);
  ServerInput in;
  in.acc = &acc;
  in.accOffset = {0, 3};
  in.blockWeightSum = {3.0, 2.0};  // what the clients' weights summed to: ignored
  in.sums = {42.0};
  dp.privatizeServerInput(6, acc, global, in);
  std::vector<double> noise(5, 0.0);
  Rng rng = centralNoiseRng(3, 6);
  addGaussianNoise(noise.data(), 3, 1.5 * 0.5, rng);
  addGaussianNoise(noise.data() + 3, 2, 1.5 * 0.5, rng);
  EXPECT_TRUE(in.privateMean);
  EXPECT_EQ(in.blockWeightSum, (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(in.sums, (std::vector<double>{0.0}));
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(in.acc->value(static_cast<std::size_t>(i)), global[i] + (0.25 * i + noise[i]) / 5.0, 1e-12);
}

TEST(ClientLevelDp, FedLpBlocksAreAveragedOverTheirExpectedSenders) {
  const ExperimentConfig cfg = config({"--algorithm", "fedlp", "--fedlp.keep_prob", "0.5", "--privacy.noise_multiplier",
                                       "1e-9"});
  const std::vector<LayerBlock> blocks = twoBlocks();
  ClientLevelDp dp(cfg, blocks);
  ExactSum acc(7);
  acc.add(0, 1.0);
  ServerInput in;
  in.accOffset = {0, 3};
  in.blockWeightSum = {1.0, 1.0};
  dp.privatizeServerInput(0, acc, std::vector<float>(5, 0.0f), in);
  EXPECT_NEAR(in.acc->value(0), 1.0 / (5 * 0.5), 1e-6);
}

TEST(ClientLevelDp, ChargesOneStepPerRoundAndOnlyTheSurvivingShares) {
  const std::vector<LayerBlock> blocks = twoBlocks();
  const ExperimentConfig centralConfig = config({});
  ClientLevelDp central(centralConfig, blocks);
  EXPECT_NEAR(central.endRound(0, 0, 3, 4), sgmEpsilon(0.25, 1.5, 1, 1e-5).epsilon, 1e-12);
  EXPECT_NEAR(central.endRound(1, 0, 4, 4), sgmEpsilon(0.25, 1.5, 2, 1e-5).epsilon, 1e-12);
  // Noise at the clients: 3 of 4 shares in the sum; none when every sampled client dropped.
  const ExperimentConfig distributedConfig = config({"--privacy.noise_placement", "clients"});
  ClientLevelDp distributed(distributedConfig, blocks);
  EXPECT_NEAR(distributed.endRound(0, 0, 3, 4), sgmEpsilon(0.25, 1.5 * std::sqrt(0.75), 1, 1e-5).epsilon, 1e-12);
  EXPECT_TRUE(std::isinf(distributed.endRound(1, 0, 0, 4)));
  // Nobody sampled: charged as a whole share.
  const ExperimentConfig emptyConfig = config({"--privacy.noise_placement", "clients"});
  ClientLevelDp empty(emptyConfig, blocks);
  EXPECT_NEAR(empty.endRound(0, 0, 0, 0), sgmEpsilon(0.25, 1.5, 1, 1e-5).epsilon, 1e-12);
  // A round secure aggregation discarded: no client's data reached the server, charged as z.
  const ExperimentConfig abortedConfig = config({"--privacy.noise_placement", "clients"});
  ClientLevelDp aborted(abortedConfig, blocks);
  EXPECT_NEAR(aborted.endRound(0, 0, 1, 4, true), sgmEpsilon(0.25, 1.5, 1, 1e-5).epsilon, 1e-12);
}

TEST(ClientLevelDp, AdaptiveClippingMovesTheClipAsAndrewEtAl) {
  const ExperimentConfig cfg =
      config({"--privacy.adaptive_clip", "true", "--privacy.noise_multiplier", "0.5", "--privacy.clip_count_std", "1"});
  const std::vector<LayerBlock> blocks = twoBlocks();
  ClientLevelDp dp(cfg, blocks);
  EXPECT_EQ(dp.numSums(), 1);
  AdaptiveClip reference({0.5, 0.5, 0.2, 1.0});
  dp.endRound(0, 3.0, 4, 4);  // 3 of 4 at or below C
  reference.update(3, 4, 5.0, 3, 0);
  EXPECT_EQ(dp.clip(), reference.clip());
  EXPECT_NE(dp.clip(), 0.5);
  // Each client's bit goes to the privacy sum.
  const std::vector<float> global(5, 0.0f), model{10, 0, 0, 0, 0};
  ClientUpdate u;
  u.vector = model.data();
  u.blockWeight = {1.0, 1.0};
  dp.privatize(1, 1, 4, {1, 1}, global, u);
  ExactSum sums(1);
  dp.addSums(sums, 0);
  EXPECT_EQ(sums.value(0), 0.0);  // norm 10 > C
}

TEST(ClientLevelDp, ACheckpointRestoresTheAccountantClipAndHistory) {
  const ExperimentConfig cfg =
      config({"--privacy.adaptive_clip", "true", "--privacy.noise_multiplier", "0.5", "--privacy.clip_count_std", "1"});
  const std::vector<LayerBlock> blocks = twoBlocks();
  ClientLevelDp a(cfg, blocks), b(cfg, blocks);
  a.endRound(0, 1.0, 4, 4);
  a.endRound(1, 4.0, 4, 4);
  test::MemoryArchive ar;
  a.checkpoint(ar);
  ar.startLoading();
  b.checkpoint(ar);
  EXPECT_EQ(b.clip(), a.clip());
  EXPECT_EQ(b.endRound(2, 2.0, 4, 4), a.endRound(2, 2.0, 4, 4));
  EXPECT_EQ(b.clip(), a.clip());
}

}  // namespace
}  // namespace fedsilo
