// Client-level DP's round step (fl/client_privacy.hpp) against its formulas: the clipped update over
// the blocks a client sends, the noise share, the fixed-denominator mean with central noise, the
// accountant's charge, the server's share of distributed noise (nobody sampled, dropouts), adaptive
// clipping and the state a checkpoint carries.
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
  dp.privatizeServerInput(6, acc, global, 4, 4, in);
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
  dp.privatizeServerInput(0, acc, std::vector<float>(5, 0.0f), 5, 5, in);
  EXPECT_NEAR(in.acc->value(0), 1.0 / (5 * 0.5), 1e-6);
}

TEST(ClientLevelDp, ChargesOneSampledGaussianStepAtZEveryRound) {
  const std::vector<LayerBlock> blocks = twoBlocks();
  for (const char* placement : {"server", "clients"}) {
    const ExperimentConfig cfg = config({"--privacy.noise_placement", placement});
    ClientLevelDp dp(cfg, blocks);
    // 3 of 4 survivors, all 4, none (the server adds the missing shares), a discarded sum.
    EXPECT_NEAR(dp.endRound(0, 0, 3), sgmEpsilon(0.25, 1.5, 1, 1e-5).epsilon, 1e-12) << placement;
    EXPECT_NEAR(dp.endRound(1, 0, 4), sgmEpsilon(0.25, 1.5, 2, 1e-5).epsilon, 1e-12) << placement;
    EXPECT_NEAR(dp.endRound(2, 0, 0), sgmEpsilon(0.25, 1.5, 3, 1e-5).epsilon, 1e-12) << placement;
    EXPECT_NEAR(dp.endRound(3, 0, 1, true), sgmEpsilon(0.25, 1.5, 4, 1e-5).epsilon, 1e-12) << placement;
  }
}

// The noise on the server's sum, (mean - g) times the denominator, over a large block: its sample
// standard deviation and mean.
struct NoiseFigures {
  double mean = 0.0, std = 0.0;
};

NoiseFigures serverNoise(ClientLevelDp& dp, int round, const ExactSum& acc, std::size_t n, int shares, int roundClients,
                         double denominator) {
  const std::vector<float> global(n, 0.5f);
  ServerInput in;
  in.accOffset.assign(1, 0);
  in.blockWeightSum.assign(1, 0.0);
  dp.privatizeServerInput(round, acc, global, shares, roundClients, in);
  double sum = 0.0, sumSq = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double noise = (in.acc->value(i) - 0.5) * denominator;
    sum += noise;
    sumSq += noise * noise;
  }
  const double mean = sum / static_cast<double>(n);
  return {mean, std::sqrt(sumSq / static_cast<double>(n) - mean * mean)};
}

// Distributed noise, nobody sampled: the released model still moves by N(0, z^2 C^2) / (q K) per
// coordinate, drawn by the server from its keyed stream, and the round is charged as one step at z.
TEST(ClientLevelDp, AnEmptyRoundUnderDistributedNoiseReleasesTheWholeNoise) {
  const std::size_t n = 40000;
  const std::vector<LayerBlock> blocks{LayerBlock{"w", 0, static_cast<int>(n), {}}};
  const ExperimentConfig cfg = config({"--privacy.noise_placement", "clients", "--seed", "11"});
  ClientLevelDp dp(cfg, blocks);
  ExactSum acc(n + 1);  // nobody uploaded: the sum is zero
  const NoiseFigures f = serverNoise(dp, 5, acc, n, 0, 0, 5.0);
  // The sample standard deviation of 40000 normals is within 1% of sigma with probability > 1 - 1e-8
  // (its relative standard error is 1 / sqrt(2n) = 0.35%).
  EXPECT_NEAR(f.std, 1.5 * 0.5, 0.01 * 1.5 * 0.5);
  EXPECT_NEAR(f.mean, 0.0, 6.0 * 1.5 * 0.5 / std::sqrt(static_cast<double>(n)));
  // It is the server's stream (seed, -1, round): the same at every rank count, another in another round.
  ClientLevelDp again(cfg, blocks);
  EXPECT_EQ(serverNoise(again, 5, acc, n, 0, 0, 5.0).std, f.std);
  EXPECT_NE(serverNoise(again, 6, acc, n, 0, 0, 5.0).std, f.std);
  EXPECT_NEAR(dp.endRound(5, 0, 0), sgmEpsilon(0.25, 1.5, 1, 1e-5).epsilon, 1e-12);
  // Every sampled client dropped (or secure aggregation discarded the sum): the same.
  EXPECT_NEAR(serverNoise(dp, 7, acc, n, 0, 3, 5.0).std, 1.5 * 0.5, 0.01 * 1.5 * 0.5);
}

// Distributed noise with dropouts: the survivors' shares plus the server's top-up have standard
// deviation z C on every coordinate, and with no dropout the server adds nothing.
TEST(ClientLevelDp, SurvivingSharesPlusTheServersTopUpHaveTheWholeNoise) {
  const std::size_t n = 40000;
  const std::vector<LayerBlock> blocks{LayerBlock{"w", 0, static_cast<int>(n), {}}};
  const ExperimentConfig cfg = config({"--privacy.noise_placement", "clients", "--seed", "12"});
  const std::vector<float> global(n, 0.5f);
  const int sampled = 4;
  for (int survivors : {1, 3, 4}) {
    ClientLevelDp dp(cfg, blocks);
    ExactSum acc(n + 1);
    for (int k = 0; k < survivors; ++k) {  // a client whose model is the global model: its share only
      ClientUpdate u;
      u.vector = global.data();
      u.blockWeight.assign(1, 1.0);
      dp.privatize(k, 2, sampled, {1}, global, u);
      acc.addScaled(0, u.vector, n, 1.0);
    }
    const NoiseFigures f = serverNoise(dp, 2, acc, n, survivors, sampled, 5.0);
    EXPECT_NEAR(f.std, 1.5 * 0.5, 0.01 * 1.5 * 0.5) << survivors << " of " << sampled;
  }
  EXPECT_EQ(distributedTopUpStd(1.5, 0.5, 4, 4), 0.0);
  EXPECT_NEAR(distributedTopUpStd(1.5, 0.5, 1, 4), 1.5 * 0.5 * std::sqrt(0.75), 1e-15);
  EXPECT_EQ(distributedTopUpStd(1.5, 0.5, 0, 0), 1.5 * 0.5);
}

TEST(ClientLevelDp, AdaptiveClippingMovesTheClipAsAndrewEtAl) {
  const ExperimentConfig cfg =
      config({"--privacy.adaptive_clip", "true", "--privacy.noise_multiplier", "0.5", "--privacy.clip_count_std", "1"});
  const std::vector<LayerBlock> blocks = twoBlocks();
  ClientLevelDp dp(cfg, blocks);
  EXPECT_EQ(dp.numSums(), 1);
  AdaptiveClip reference({0.5, 0.5, 0.2, 1.0});
  dp.endRound(0, 3.0, 4);  // 3 of 4 at or below C
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
  a.endRound(0, 1.0, 4);
  a.endRound(1, 4.0, 4);
  test::MemoryArchive ar;
  a.checkpoint(ar);
  ar.startLoading();
  b.checkpoint(ar);
  EXPECT_EQ(b.clip(), a.clip());
  EXPECT_EQ(b.endRound(2, 2.0, 4), a.endRound(2, 2.0, 4));
  EXPECT_EQ(b.clip(), a.clip());
}

}  // namespace
}  // namespace fedsilo
