// The zfp compressor (built only with FEDSILO_ZFP=ON; without it, compress_config_test checks that
// fl.compress = zfp is refused): the error bound of fixed-accuracy mode and the size of fixed-rate mode.
#include <gtest/gtest.h>

#ifdef FEDSILO_HAVE_ZFP
#include <cmath>
#include <optional>
#include <vector>

#include "compress/zfp_codec.hpp"

using namespace fedsilo;

namespace {

std::vector<float> smoothAndNoisy(std::size_t n) {
  std::vector<float> x(n);
  Rng rng(4, -1, -1, Purpose::Misc);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(std::sin(0.01 * i) + 0.01 * rng.normal());
  return x;
}

const StreamKey kKey{1, 2, 3, Link::Uplink};

}  // namespace

TEST(CompressZfp, FixedAccuracyStaysWithinTheTolerance) {
  const auto x = smoothAndNoisy(1003);
  const BlockLayout blocks = {{0, 800}, {800, 203}};
  for (double tol : {1e-2, 1e-4}) {
    const ZfpCodec zfp(tol, 0);
    const EncodedUpdate e = zfp.encode(x.data(), x.size(), blocks, kKey);
    // Its size depends on the values: the clock refuses it.
    EXPECT_FALSE(zfp.encodedSize(blocks).has_value());
    const auto y = zfp.decode(e);
    double maxErr = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) maxErr = std::max(maxErr, std::fabs(double(y[i]) - x[i]));
    EXPECT_LE(maxErr, tol) << tol;
    EXPECT_GT(maxErr, 0.0) << tol;                       // lossy, not a copy
    EXPECT_LT(e.size(), 4 * x.size()) << tol;            // and smaller than the floats
    EXPECT_EQ(zfp.encode(x.data(), x.size(), blocks, kKey).bytes, e.bytes);  // deterministic
  }
}

TEST(CompressZfp, FixedRateSizeIsTheRateTimesTheBlocksOfFour) {
  const auto x = smoothAndNoisy(1003);
  for (int rate : {4, 8, 16}) {
    const ZfpCodec zfp(0.0, rate);
    const EncodedUpdate e = zfp.encode(x.data(), x.size(), {{0, 800}, {800, 203}}, kKey);
    // ZFP codes 1-D blocks of 4 values at 4 · rate bits; the stream's length is that in whole bytes.
    auto section = [&](std::size_t m) { return 4 + (((m + 3) / 4) * 4 * rate + 7) / 8; };
    EXPECT_EQ(e.size(), 8 + section(800) + section(203)) << rate;
    // What the clock charges before encoding, from the library's own parameters.
    EXPECT_EQ(zfp.encodedSize({{0, 800}, {800, 203}}), std::optional<std::size_t>(e.size())) << rate;
    EXPECT_EQ(e.bytes[1], rate);
    const auto y = zfp.decode(e);
    double maxErr = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) maxErr = std::max(maxErr, std::fabs(double(y[i]) - x[i]));
    EXPECT_LT(maxErr, rate >= 16 ? 1e-3 : 0.5) << rate;
  }
}
TEST(CompressZfp, FixedRateSizeFromTheLayoutIsTheSizeEncodeGives) {
  const auto x = smoothAndNoisy(300);
  for (int rate : {1, 2, 3, 7, 16, 32})  // rates 1 and 2: ZFP raises a float block to its minimum bits
    for (std::size_t m : {1, 2, 3, 4, 5, 17, 64, 299}) {
      const ZfpCodec zfp(0.0, rate);
      const BlockLayout blocks = {{1, m}};
      EXPECT_EQ(zfp.encodedSize(blocks),
                std::optional<std::size_t>(zfp.encode(x.data(), x.size(), blocks, kKey).size()))
          << "rate " << rate << ", " << m << " values";
    }
}
#endif
