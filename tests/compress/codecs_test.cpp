// Each compressor on small vectors worked out by hand: the decoded values and the exact wire bytes
// (the 8-byte header plus each block's section, as docs/compression.md gives them).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <optional>
#include <vector>

#include "compress/identity_codec.hpp"
#include "compress/qsgd_codec.hpp"
#include "compress/randk_codec.hpp"
#include "compress/sign_codec.hpp"
#include "compress/topk_codec.hpp"
#include "core/error.hpp"

using namespace fedsilo;

namespace {

const StreamKey kKey{7, 3, 11, Link::Uplink};

BlockLayout whole(std::size_t n) { return {{0, n}}; }

std::vector<float> roundTrip(const Compressor& c, const std::vector<float>& x, const BlockLayout& blocks,
                             std::size_t* bytes = nullptr) {
  const EncodedUpdate e = c.encode(x.data(), x.size(), blocks, kKey);
  if (bytes) *bytes = e.size();
  return c.decode(e);
}

}  // namespace

TEST(CompressCodecs, NoneSendsTheFloatsAsTheyAreBehindAnEightByteHeader) {
  const IdentityCodec none;
  const std::vector<float> x = {1.0f, -2.0f, 3.5f};
  const EncodedUpdate e = none.encode(x.data(), x.size(), whole(3), kKey);
  ASSERT_EQ(e.size(), 8u + 4u * 3u);
  const std::vector<std::uint8_t> header = {0, 0, 1, 0, 3, 0, 0, 0};  // codec 0, no parameter, 1 block, n = 3
  EXPECT_EQ(std::vector<std::uint8_t>(e.bytes.begin(), e.bytes.begin() + 8), header);
  float second;
  std::memcpy(&second, e.bytes.data() + 12, 4);
  EXPECT_EQ(second, -2.0f);
  EXPECT_EQ(none.decode(e), x);
}

TEST(CompressCodecs, ElementsOutsideEveryBlockAreNotSentAndDecodeToZero) {
  const IdentityCodec none;
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  std::size_t bytes = 0;
  const auto y = roundTrip(none, x, {{1, 2}, {4, 1}}, &bytes);
  EXPECT_EQ(bytes, 8u + 4u * 3u);
  EXPECT_EQ(y, (std::vector<float>{0, 2, 3, 0, 5, 0}));
}

TEST(CompressCodecs, QsgdOnIntegerLevelsIsExactAndPacksSignAboveLevel) {
  // x = (2, -1, 2): norm 3; bits 2 gives s = 3 levels, so s |x_i| / norm = (2, 1, 2) exactly and no
  // rounding is random. Codes of 3 bits: 2, 1 | 4 (negative), 2 -> 2 + (5 << 3) + (2 << 6) = 0xAA, 0x00.
  const QsgdCodec qsgd(2);
  const std::vector<float> x = {2.0f, -1.0f, 2.0f};
  const EncodedUpdate e = qsgd.encode(x.data(), 3, whole(3), kKey);
  ASSERT_EQ(e.size(), 8u + 4u + 2u);
  EXPECT_EQ(e.bytes[0], 1);  // codec qsgd
  EXPECT_EQ(e.bytes[1], 2);  // its bits
  float norm;
  std::memcpy(&norm, e.bytes.data() + 8, 4);
  EXPECT_EQ(norm, 3.0f);
  EXPECT_EQ(e.bytes[12], 0xAA);
  EXPECT_EQ(e.bytes[13], 0x00);
  EXPECT_EQ(qsgd.decode(e), x);
}

TEST(CompressCodecs, QsgdScalesEachBlockByItsOwnNorm) {
  // Block 1 as above; block 2 = (0, 0, 10): norm 10, levels (0, 0, 3); block 3 all zero.
  const QsgdCodec qsgd(2);
  const std::vector<float> x = {2, -1, 2, 0, 0, 10, 0, 0};
  std::size_t bytes = 0;
  EXPECT_EQ(roundTrip(qsgd, x, {{0, 3}, {3, 3}, {6, 2}}, &bytes), x);
  EXPECT_EQ(bytes, 8u + (4 + 2) + (4 + 2) + (4 + 1));
}

TEST(CompressCodecs, QsgdRoundsEachElementToOneOfItsTwoNeighbouringLevels) {
  // x = (3, -4), norm 5, bits 1 (s = 1): 3 goes to 0 or 5, -4 to 0 or -5.
  const QsgdCodec qsgd(1);
  const std::vector<float> x = {3.0f, -4.0f};
  int up0 = 0, up1 = 0;
  for (int round = 0; round < 200; ++round) {
    const EncodedUpdate e = qsgd.encode(x.data(), 2, whole(2), StreamKey{1, 0, round, Link::Uplink});
    EXPECT_EQ(e.size(), 8u + 4u + 1u);  // 2 codes of 2 bits
    const auto y = qsgd.decode(e);
    ASSERT_TRUE(y[0] == 0.0f || y[0] == 5.0f) << y[0];
    ASSERT_TRUE(y[1] == 0.0f || y[1] == -5.0f) << y[1];
    up0 += y[0] != 0.0f;
    up1 += y[1] != 0.0f;
  }
  EXPECT_GT(up0, 0);
  EXPECT_LT(up0, 200);
  EXPECT_GT(up1, up0 / 2);  // rounds up with probability 0.8 against 0.6
}

TEST(CompressCodecs, QsgdBytesFollowTheBitWidth) {
  const std::vector<float> x(1000, 0.5f);
  for (int bits : {1, 2, 4, 8, 16}) {
    const QsgdCodec qsgd(bits);
    std::size_t bytes = 0;
    roundTrip(qsgd, x, {{0, 600}, {600, 400}}, &bytes);
    EXPECT_EQ(bytes, 8u + (4 + (600u * (bits + 1) + 7) / 8) + (4 + (400u * (bits + 1) + 7) / 8)) << bits;
  }
}

TEST(CompressCodecs, TopKKeepsTheLargestMagnitudesWithTiesToTheLowerIndex) {
  const std::vector<float> x = {0.5f, -3.0f, 2.0f, -3.0f, 1.0f};
  std::size_t bytes = 0;
  // ratio 0.2: k = 1; |x_1| = |x_3| = 3, the lower index wins. Section: k, one 3-bit index, one value.
  EXPECT_EQ(roundTrip(TopKCodec(0.2), x, whole(5), &bytes), (std::vector<float>{0, -3, 0, 0, 0}));
  EXPECT_EQ(bytes, 8u + 4u + 1u + 4u);
  // ratio 0.6: k = 3, indices 1, 2, 3 at 3 bits (2 bytes).
  EXPECT_EQ(roundTrip(TopKCodec(0.6), x, whole(5), &bytes), (std::vector<float>{0, -3, 2, -3, 0}));
  EXPECT_EQ(bytes, 8u + 4u + 2u + 12u);
}

TEST(CompressCodecs, TopKSelectsPerBlock) {
  // ratio 0.5: block (0.5, -3, 2) keeps round(1.5) = 2 at 2-bit indices; block (-3, 1) keeps 1 at 1 bit.
  const std::vector<float> x = {0.5f, -3.0f, 2.0f, -3.0f, 1.0f};
  std::size_t bytes = 0;
  EXPECT_EQ(roundTrip(TopKCodec(0.5), x, {{0, 3}, {3, 2}}, &bytes), (std::vector<float>{0, -3, 2, -3, 0}));
  EXPECT_EQ(bytes, 8u + (4 + 1 + 8) + (4 + 1 + 4));
}

TEST(CompressCodecs, TopKWithRatioOneReproducesNoneBitForBit) {
  std::vector<float> x(1500);
  Rng rng(5, -1, -1, Purpose::Misc);
  for (float& v : x) v = static_cast<float>(rng.normal() * 1e-3);
  x[3] = -0.0f;
  x[10] = std::numeric_limits<float>::denorm_min();
  x[20] = std::numeric_limits<float>::quiet_NaN();
  x[30] = -std::numeric_limits<float>::infinity();
  const BlockLayout blocks = {{0, 1000}, {1000, 300}, {1400, 100}};
  const IdentityCodec none;
  const TopKCodec topk(1.0);
  const auto a = roundTrip(none, x, blocks), b = roundTrip(topk, x, blocks);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(a.data(), x.data(), 1300 * sizeof(float)), 0);  // and both are the input there
}

TEST(CompressCodecs, RandKSendsOnlyValuesAndScalesThemByMOverK) {
  const std::vector<float> x = {1.0f, 2.0f, 3.0f, 4.0f};
  const RandKCodec randk(0.5);
  std::size_t bytes = 0;
  const auto y = roundTrip(randk, x, whole(4), &bytes);
  EXPECT_EQ(bytes, 8u + 4u + 2u * 4u);  // k, two values, no indices
  int kept = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    if (y[i] != 0.0f) {
      ++kept;
      EXPECT_EQ(y[i], 2.0f * x[i]);
    }
  }
  EXPECT_EQ(kept, 2);
  EXPECT_EQ(roundTrip(RandKCodec(1.0), x, whole(4)), x);
}

TEST(CompressCodecs, RandKDrawsADifferentSetPerRoundFromTheKey) {
  const std::vector<float> x(64, 1.0f);
  const RandKCodec randk(0.25);
  const auto a = randk.decode(randk.encode(x.data(), 64, whole(64), StreamKey{1, 2, 3, Link::Uplink}));
  const auto b = randk.decode(randk.encode(x.data(), 64, whole(64), StreamKey{1, 2, 4, Link::Uplink}));
  EXPECT_NE(a, b);
  EXPECT_EQ(std::count(a.begin(), a.end(), 4.0f), 16);
}

TEST(CompressCodecs, SignSendsSignBitsAndTheMeanMagnitude) {
  // mean |x| = 12 / 5 = 2.4; negative at 1 and 4: bits 0b10010.
  const std::vector<float> x = {1.0f, -2.0f, 3.0f, 0.0f, -6.0f};
  const SignCodec sign;
  const EncodedUpdate e = sign.encode(x.data(), 5, whole(5), kKey);
  ASSERT_EQ(e.size(), 8u + 4u + 1u);
  EXPECT_EQ(e.bytes[12], 0x12);
  const float s = 2.4f;
  EXPECT_EQ(sign.decode(e), (std::vector<float>{s, -s, s, s, -s}));
  std::size_t bytes = 0;
  roundTrip(sign, std::vector<float>(17, 1.0f), {{0, 9}, {9, 8}}, &bytes);
  EXPECT_EQ(bytes, 8u + (4 + 2) + (4 + 1));
}

TEST(CompressCodecs, EveryRandomisedCodecIsAFunctionOfItsKey) {
  std::vector<float> x(5000);
  Rng rng(9, -1, -1, Purpose::Misc);
  for (float& v : x) v = static_cast<float>(rng.normal());
  const BlockLayout blocks = {{0, 4000}, {4000, 1000}};
  const QsgdCodec qsgd(4);
  const RandKCodec randk(0.1);
  for (const Compressor* c : {static_cast<const Compressor*>(&qsgd), static_cast<const Compressor*>(&randk)}) {
    const StreamKey key{1, 2, 3, Link::Uplink};
    const auto same = c->encode(x.data(), x.size(), blocks, key).bytes;
    EXPECT_EQ(c->encode(x.data(), x.size(), blocks, key).bytes, same) << c->name();
    for (StreamKey other : {StreamKey{1, 5, 3, Link::Uplink}, StreamKey{1, 2, 4, Link::Uplink},
                            StreamKey{1, 2, 3, Link::Downlink}, StreamKey{2, 2, 3, Link::Uplink}})
      EXPECT_NE(c->decode(c->encode(x.data(), x.size(), blocks, other)), c->decode(c->encode(x.data(), x.size(), blocks, key)))
          << c->name();
  }
}

TEST(CompressCodecs, DecodeRefusesBytesThatDoNotMatch) {
  const std::vector<float> x = {1, 2, 3, 4};
  const QsgdCodec qsgd(4);
  EncodedUpdate e = qsgd.encode(x.data(), 4, whole(4), kKey);
  EXPECT_THROW(QsgdCodec(3).decode(e), RuntimeError);  // other bit width
  EXPECT_THROW(SignCodec().decode(e), RuntimeError);   // other codec
  e.bytes.pop_back();
  EXPECT_THROW(qsgd.decode(e), RuntimeError);  // truncated
  e = qsgd.encode(x.data(), 4, whole(4), kKey);
  e.bytes.push_back(0);
  EXPECT_THROW(qsgd.decode(e), RuntimeError);  // trailing bytes
}

TEST(CompressCodecs, EncodeRefusesOverlappingOrOutsideBlocks) {
  const std::vector<float> x(10, 1.0f);
  const IdentityCodec none;
  EXPECT_THROW(none.encode(x.data(), 10, {{0, 5}, {4, 2}}, kKey), RuntimeError);
  EXPECT_THROW(none.encode(x.data(), 10, {{8, 3}}, kKey), RuntimeError);
  EXPECT_THROW(none.encode(x.data(), 10, {{5, 2}, {0, 2}}, kKey), RuntimeError);
}

TEST(CompressCodecs, EncodedSizeFromTheLayoutIsTheSizeEncodeGives) {
  std::vector<float> x(3001);
  Rng rng(4, -1, -1, Purpose::Misc);
  for (float& v : x) v = static_cast<float>(rng.normal());
  // Blocks of odd sizes, one empty, one of a single element (k = m for any ratio), one whole.
  const std::vector<BlockLayout> layouts = {
      {}, {{0, 1}}, {{0, 0}, {5, 17}, {100, 1000}}, {{0, 3001}}, {{1, 2}, {3, 2997}}};
  const IdentityCodec none;
  const QsgdCodec qsgd3(3), qsgd8(8);
  const TopKCodec topk(0.1), topkAll(1.0);
  const RandKCodec randk(0.05);
  const SignCodec sign;
  for (const Compressor* c :
       std::initializer_list<const Compressor*>{&none, &qsgd3, &qsgd8, &topk, &topkAll, &randk, &sign})
    for (const BlockLayout& layout : layouts) {
      const std::optional<std::size_t> size = c->encodedSize(layout);
      ASSERT_TRUE(size.has_value()) << c->name();
      EXPECT_EQ(*size, c->encode(x.data(), x.size(), layout, kKey).size()) << c->name() << " " << layout.size();
    }
  // By hand: qsgd at 3 bits over one block of 17: 8 + 4 + ceil(17 * 4 / 8).
  EXPECT_EQ(qsgd3.encodedSize({{5, 17}}), std::optional<std::size_t>(8 + 4 + 9));
}
