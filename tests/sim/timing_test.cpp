// The system model's formulas on hand-computed cases: compute and transfer seconds, the silos' drawn
// profiles and jitter, max-min fair sharing of the server link, the deadline and the round's length.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/rng.hpp"
#include "sim/distribution.hpp"
#include "sim/link_sharing.hpp"
#include "sim/sync_round.hpp"
#include "sim/system_model.hpp"
#include "sim/timing.hpp"

using namespace fedsilo;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

DistributionSpec spec(const std::string& text) {
  return parseDistribution("system.x", text, 4, ValueRange{0.0, false});
}

}  // namespace

TEST(Timing, ComputeIsFlopsTimesSamplesOverRate) {
  // 1e6 FLOPs per sample x 1000 samples at 2 GFLOP/s: 1e9 / 2e9 = 0.5 s.
  EXPECT_DOUBLE_EQ(computeSeconds(1e6, 1000, 2.0), 0.5);
  EXPECT_EQ(computeSeconds(1e6, 1000, kInf), 0.0);
  EXPECT_EQ(computeSeconds(1e6, 0, 2.0), 0.0);
}

TEST(Timing, TransferIsBitsOverRatePlusLatency) {
  // 1e6 bytes = 8e6 bits at 8 Mbit/s: 1 s, plus 20 ms.
  EXPECT_DOUBLE_EQ(transferSeconds(1e6, 8.0, 20.0), 1.02);
  EXPECT_DOUBLE_EQ(transferSeconds(1e6, kInf, 20.0), 0.02);
  EXPECT_EQ(transferSeconds(0.0, 8.0, 20.0), 0.0);  // nothing sent, no message
}

TEST(SystemModel, ProfilesFollowTheSpecsAndASymmetricLinkIsOneDraw) {
  SystemConfig c;
  c.computeGflops = spec("list:1,2");
  c.uplinkMbps = c.downlinkMbps = spec("uniform:50,500");
  c.symmetricLink = true;
  c.latencyMs = spec("10");
  const SystemModel m(c, 5, 4);
  EXPECT_TRUE(m.enabled());
  EXPECT_EQ(m.profile(3).computeGflops, 2.0);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(m.profile(k).uplinkMbps, m.profile(k).downlinkMbps);
    EXPECT_EQ(m.profile(k).uplinkMbps,
              drawValue(*c.uplinkMbps, 5, k, static_cast<std::uint64_t>(SystemQuantity::Bandwidth)));
  }
  // Separate directions are separate draws.
  c.symmetricLink = false;
  const SystemModel split(c, 5, 4);
  EXPECT_NE(split.profile(0).uplinkMbps, split.profile(0).downlinkMbps);
  // 1e6 bytes at the drawn rate plus 10 ms.
  EXPECT_DOUBLE_EQ(m.uploadSeconds(1, 1e6), 8.0 / m.profile(1).uplinkMbps + 0.01);
}

TEST(SystemModel, UnsetQuantitiesAreFreeAndTheModelIsOff) {
  const SystemModel m(SystemConfig{}, 1, 2);
  EXPECT_FALSE(m.enabled());
  EXPECT_TRUE(std::isinf(m.profile(0).computeGflops));
  EXPECT_EQ(m.computeSeconds(0, 3, 1e6, 100), 0.0);
  EXPECT_EQ(m.uploadSeconds(1, 1e6), 0.0);
}

TEST(SystemModel, JitterIsTheKeyedLognormalFactorOfEachRound) {
  SystemConfig c;
  c.computeGflops = spec("1");
  c.jitter = spec("0.5");
  const SystemModel m(c, 7, 3);
  Rng r(7, 2, 4, Purpose::SystemJitter);
  const double factor = std::exp(0.5 * r.normal());
  EXPECT_EQ(m.jitterFactor(2, 4), factor);
  // 1e9 FLOPs at 1 GFLOP/s is 1 s, times the factor.
  EXPECT_DOUBLE_EQ(m.computeSeconds(2, 4, 1e7, 100), factor);
  EXPECT_NE(m.jitterFactor(2, 5), factor);
  c.jitter.reset();
  EXPECT_EQ(SystemModel(c, 7, 3).jitterFactor(2, 4), 1.0);
}

TEST(LinkSharing, MaxMinFairRatesWaterFill) {
  // Capacity 100 over caps 20, 50, inf: 100/3 > 20, so 20; then 80/2 = 40 < 50: 40 and 40.
  const std::vector<double> r = maxMinFairRates({20, kInf, 50}, 100);
  EXPECT_DOUBLE_EQ(r[0], 20);
  EXPECT_DOUBLE_EQ(r[1], 40);
  EXPECT_DOUBLE_EQ(r[2], 40);
}

TEST(LinkSharing, OverlappingUploadsShareTheServerLink) {
  // 100 B/s server. A (100 B) alone for 0.5 s sends 50 B; from 0.5 both get 50 B/s: A's last 50 B take
  // 1 s (A done at 1.5), B has sent 50 B then and sends the rest alone at 100 B/s (done at 2.0).
  const std::vector<double> f = sharedLinkFinish({{0.0, 100, kInf}, {0.5, 100, kInf}}, 100);
  EXPECT_DOUBLE_EQ(f[0], 1.5);
  EXPECT_DOUBLE_EQ(f[1], 2.0);
}

TEST(LinkSharing, ASlowUplinkLeavesItsShareToTheOthers) {
  // A is capped at 20 B/s, B gets 80: B done at 1.25; A has sent 25 B, its 75 left at 20 B/s: 5.0.
  const std::vector<double> f = sharedLinkFinish({{0.0, 100, 20}, {0.0, 100, kInf}}, 100);
  EXPECT_DOUBLE_EQ(f[1], 1.25);
  EXPECT_DOUBLE_EQ(f[0], 5.0);
}

TEST(LinkSharing, WithoutAServerLimitEachUploadRunsAtItsOwnRate) {
  const std::vector<double> f = sharedLinkFinish({{1.0, 100, 50}, {0.0, 0, 10}, {2.0, 30, kInf}}, kInf);
  EXPECT_DOUBLE_EQ(f[0], 3.0);
  EXPECT_DOUBLE_EQ(f[1], 0.0);
  EXPECT_DOUBLE_EQ(f[2], 2.0);
  // Disjoint uploads on a shared link do not slow each other.
  const std::vector<double> g = sharedLinkFinish({{0.0, 100, kInf}, {5.0, 100, kInf}}, 100);
  EXPECT_DOUBLE_EQ(g[0], 1.0);
  EXPECT_DOUBLE_EQ(g[1], 6.0);
}

TEST(SyncRound, UploadsOverOwnLinksOrTheSharedServerLink) {
  SystemConfig c;
  c.uplinkMbps = spec("8");  // 1 MB/s
  c.latencyMs = spec("100");
  const SystemModel own(c, 1, 2);
  std::vector<double> s = syncUploadSeconds(own, {{0, 0.0, 1e6}, {1, 0.5, 1e6}});
  EXPECT_DOUBLE_EQ(s[0], 1.1);
  EXPECT_DOUBLE_EQ(s[1], 1.1);
  // A 1 MB/s server link: client 0 alone for 0.5 s, both at 0.5 MB/s, client 0 done at 1.5 (upload 1.5
  // + latency), client 1 at 2.0 (upload 1.5 + latency).
  c.uplinkMbps = spec("1000");
  c.serverBandwidthMbps = 8;
  const SystemModel shared(c, 1, 2);
  s = syncUploadSeconds(shared, {{0, 0.0, 1e6}, {1, 0.5, 1e6}});
  EXPECT_NEAR(s[0], 1.5 + 0.1, 1e-9);
  EXPECT_NEAR(s[1], 1.5 + 0.1, 1e-9);
}

TEST(SyncRound, DeadlineAndRoundLength) {
  EXPECT_TRUE(meetsDeadline(1, 2, 3, 6));
  EXPECT_FALSE(meetsDeadline(1, 2, 3.01, 6));
  EXPECT_TRUE(meetsDeadline(100, 2, 3, 0));  // no deadline
  SystemConfig c;
  c.serverSeconds = 1;
  EXPECT_DOUBLE_EQ(syncRoundSeconds({3, 5}, false, c), 6);
  c.deadlineSeconds = 10;
  EXPECT_DOUBLE_EQ(syncRoundSeconds({3, 5}, false, c), 6);
  EXPECT_DOUBLE_EQ(syncRoundSeconds({3, 5}, true, c), 11);  // the server waited for the late silo until 10
}
