// Error feedback: what was sent plus what is kept adds up to what was produced, per client; residuals
// survive a checkpoint; blocks not sent keep theirs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <memory>
#include <vector>

#include "compress/error_feedback.hpp"
#include "compress/qsgd_codec.hpp"
#include "compress/sign_codec.hpp"
#include "compress/topk_codec.hpp"
#include "support/memory_archive.hpp"

using namespace fedsilo;

namespace {

constexpr std::size_t kN = 300;
const BlockLayout kBlocks = {{0, 200}, {200, 100}};

std::vector<float> update(int client, int round) {
  std::vector<float> x(kN);
  Rng rng(3, client, round, Purpose::Misc);
  for (float& v : x) v = static_cast<float>(rng.normal());
  return x;
}

StreamKey key(int client, int round) { return StreamKey{3, client, round, Link::Uplink}; }

}  // namespace

TEST(CompressErrorFeedback, SentPlusResidualEqualsTheSumOfUpdates) {
  const TopKCodec topk(0.05);
  const QsgdCodec qsgd(2);
  const SignCodec sign;
  for (const Compressor* c : {static_cast<const Compressor*>(&topk), static_cast<const Compressor*>(&qsgd),
                              static_cast<const Compressor*>(&sign)}) {
    ResidualStore store;
    std::vector<double> produced(kN, 0.0), delivered(kN, 0.0);
    const int rounds = 30;
    double maxUpdate = 0.0, maxSent = 0.0, maxKept = 0.0;
    for (int r = 0; r < rounds; ++r) {
      const auto d = update(4, r);
      const auto sent = c->decode(store.encodeWithFeedback(4, *c, d.data(), kN, kBlocks, key(4, r)));
      for (std::size_t i = 0; i < kN; ++i) {
        produced[i] += d[i];
        delivered[i] += sent[i];
        maxUpdate = std::max(maxUpdate, std::fabs(double(d[i])));
        maxSent = std::max(maxSent, std::fabs(double(sent[i])));
        maxKept = std::max(maxKept, std::fabs(double((*store.find(4))[i])));
      }
    }
    const std::vector<float>& e = *store.find(4);
    double maxErr = 0.0, maxResidual = 0.0;
    for (std::size_t i = 0; i < kN; ++i) {
      maxErr = std::max(maxErr, std::fabs(delivered[i] + e[i] - produced[i]));
      maxResidual = std::max(maxResidual, std::fabs(double(e[i])));
    }
    // Each round rounds twice in float (p = e + d, e' = p - sent), each time by at most half an ulp of
    // a value no larger than |e| + |d| + |sent|.
    const double bound = rounds * FLT_EPSILON * (maxUpdate + maxSent + maxKept);
    EXPECT_LT(maxErr, bound) << c->name();
    EXPECT_GT(maxResidual, 0.1) << c->name();  // something was held back: the check is not vacuous
  }
}

TEST(CompressErrorFeedback, ResidualsAreKeptPerClient) {
  const TopKCodec topk(0.1);
  ResidualStore store;
  const auto a = update(1, 0), b = update(2, 0);
  store.encodeWithFeedback(1, topk, a.data(), kN, kBlocks, key(1, 0));
  store.encodeWithFeedback(2, topk, b.data(), kN, kBlocks, key(2, 0));
  ASSERT_EQ(store.size(), 2u);
  EXPECT_EQ(store.find(3), nullptr);
  // Client 1's residual is its update less what top-k sent: zero exactly where it sent.
  const auto sent = topk.decode(topk.encode(a.data(), kN, kBlocks, key(1, 0)));
  for (std::size_t i = 0; i < kN; ++i) EXPECT_EQ((*store.find(1))[i], a[i] - sent[i]) << i;
  EXPECT_NE(*store.find(1), *store.find(2));
}

TEST(CompressErrorFeedback, ABlockNotSentKeepsItsResidual) {
  const TopKCodec topk(0.1);
  ResidualStore store;
  const auto r0 = update(1, 0), r1 = update(1, 1);
  store.encodeWithFeedback(1, topk, r0.data(), kN, kBlocks, key(1, 0));
  const std::vector<float> before = *store.find(1);
  store.encodeWithFeedback(1, topk, r1.data(), kN, {{0, 200}}, key(1, 1));  // the second block is not sent
  const std::vector<float>& after = *store.find(1);
  for (std::size_t i = 200; i < kN; ++i) EXPECT_EQ(after[i], before[i]) << i;
  EXPECT_NE(std::vector<float>(after.begin(), after.begin() + 200),
            std::vector<float>(before.begin(), before.begin() + 200));
}

TEST(CompressErrorFeedback, ResidualsSurviveACheckpoint) {
  const TopKCodec topk(0.05);
  ResidualStore original;
  for (int r = 0; r < 3; ++r)
    for (int client : {0, 5}) {
      const auto d = update(client, r);
      original.encodeWithFeedback(client, topk, d.data(), kN, kBlocks, key(client, r));
    }
  test::MemoryArchive ar;
  original.checkpoint(ar);
  EXPECT_EQ(ar.clientFloatsOf("compress_residual").size(), 2u);
  ar.startLoading();
  ResidualStore resumed;
  resumed.checkpoint(ar);
  ASSERT_EQ(resumed.size(), 2u);
  EXPECT_EQ(*resumed.find(5), *original.find(5));
  // The next round's upload is the same from the resumed store as from the original.
  const auto d = update(5, 3);
  EXPECT_EQ(resumed.encodeWithFeedback(5, topk, d.data(), kN, kBlocks, key(5, 3)).bytes,
            original.encodeWithFeedback(5, topk, d.data(), kN, kBlocks, key(5, 3)).bytes);
}
