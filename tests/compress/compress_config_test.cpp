// The compression options: parsing, the defaults, and every bad value refused with one ConfigError line
// (exit code 2) that names the option.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "compress/compress_config.hpp"
#include "compress/registry.hpp"
#include "core/error.hpp"

using namespace fedsilo;

namespace {

using Options = std::map<std::string, std::string>;

// The message of the ConfigError that parsing `o` throws ("" when it throws none).
std::string refusal(const Options& o) {
  try {
    parseCompressConfig(o);
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.code(), ExitCode::Config);
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what;
  }
  return "";
}

}  // namespace

TEST(CompressConfig, DefaultsToNoCompression) {
  const CompressConfig c = parseCompressConfig({});
  EXPECT_EQ(c.method, CompressMethod::None);
  EXPECT_FALSE(c.active());
  EXPECT_FALSE(c.errorFeedback);
  EXPECT_STREQ(makeCompressor(c)->name(), "none");
}

TEST(CompressConfig, ParsesEachOption) {
  const CompressConfig q = parseCompressConfig(
      {{"fl.compress", "qsgd"}, {"fl.compress_bits", "4"}, {"fl.error_feedback", "true"}, {"fl.compress_downlink", "1"}});
  EXPECT_EQ(q.method, CompressMethod::Qsgd);
  EXPECT_EQ(q.bits, 4);
  EXPECT_TRUE(q.errorFeedback);
  EXPECT_TRUE(q.downlink);
  const CompressConfig t = parseCompressConfig({{"fl.compress", "topk"}, {"fl.compress_ratio", "0.25"}});
  EXPECT_EQ(t.method, CompressMethod::TopK);
  EXPECT_DOUBLE_EQ(*t.ratio, 0.25);
  EXPECT_FALSE(t.errorFeedback);
  EXPECT_DOUBLE_EQ(parseCompressConfig({{"fl.compress", "randk"}}).ratioOrDefault(), CompressConfig::kDefaultRatio);
}

TEST(CompressConfig, TheRegistryMakesEveryMethodByItsName) {
  for (const CompressorEntry& e : compressorTable()) {
    EXPECT_EQ(parseCompressMethod(e.name), e.method);
    EXPECT_STREQ(compressMethodName(e.method), e.name);
    if (e.method == CompressMethod::Zfp && !zfpAvailable()) continue;  // refused: see below
    EXPECT_STREQ(makeCompressor(parseCompressConfig({{"fl.compress", e.name}}))->name(), e.name);
  }
}

TEST(CompressConfig, RefusesBadValuesNamingTheOption) {
  const std::map<std::string, Options> bad = {
      {"fl.compress = gzip", {{"fl.compress", "gzip"}}},
      {"fl.compress_bits = 0", {{"fl.compress", "qsgd"}, {"fl.compress_bits", "0"}}},
      {"fl.compress_bits = 17", {{"fl.compress", "qsgd"}, {"fl.compress_bits", "17"}}},
      {"fl.compress_bits = 33", {{"fl.compress", "qsgd"}, {"fl.compress_bits", "33"}}},
      {"fl.compress_bits: 'four'", {{"fl.compress", "qsgd"}, {"fl.compress_bits", "four"}}},
      {"fl.compress_ratio = 0", {{"fl.compress", "topk"}, {"fl.compress_ratio", "0"}}},
      {"fl.compress_ratio = 1.5", {{"fl.compress", "randk"}, {"fl.compress_ratio", "1.5"}}},
      {"fl.compress_ratio = -0.1", {{"fl.compress", "topk"}, {"fl.compress_ratio", "-0.1"}}},
      {"fl.compress_ratio = nan", {{"fl.compress", "topk"}, {"fl.compress_ratio", "nan"}}},
      {"fl.error_feedback = maybe", {{"fl.compress", "topk"}, {"fl.error_feedback", "maybe"}}},
  };
  for (const auto& [expected, options] : bad) EXPECT_NE(refusal(options).find(expected), std::string::npos) << expected;
}

TEST(CompressConfig, RefusesOptionsThatDoNotApplyToTheMethod) {
  EXPECT_NE(refusal({{"fl.compress", "topk"}, {"fl.compress_bits", "4"}}).find("fl.compress_bits = 4: does not apply"),
            std::string::npos);
  EXPECT_NE(refusal({{"fl.compress", "qsgd"}, {"fl.compress_ratio", "0.1"}}).find("fl.compress_ratio"),
            std::string::npos);
  EXPECT_NE(refusal({{"fl.compress", "signsgd"}, {"fl.compress_tolerance", "0.01"}}).find("fl.compress_tolerance"),
            std::string::npos);
  EXPECT_NE(refusal({{"fl.error_feedback", "true"}}).find("fl.error_feedback"), std::string::npos);
  EXPECT_NE(refusal({{"fl.compress", "none"}, {"fl.compress_downlink", "true"}}).find("fl.compress_downlink"),
            std::string::npos);
}

TEST(CompressConfig, ZfpNeedsTheBackendAndOneOfRateOrAccuracy) {
  if (!zfpAvailable()) {
    const std::string why = refusal({{"fl.compress", "zfp"}});
    EXPECT_NE(why.find("fl.compress = zfp"), std::string::npos) << why;
    EXPECT_NE(why.find("FEDSILO_ZFP"), std::string::npos) << why;
    CompressConfig c;
    c.method = CompressMethod::Zfp;
    EXPECT_THROW(makeCompressor(c), ConfigError);
    return;
  }
  EXPECT_NE(refusal({{"fl.compress", "zfp"}, {"fl.compress_tolerance", "0"}}).find("fl.compress_tolerance = 0"),
            std::string::npos);
  EXPECT_NE(refusal({{"fl.compress", "zfp"}, {"fl.compress_tolerance", "-1"}}).find("fl.compress_tolerance = -1"),
            std::string::npos);
  EXPECT_NE(refusal({{"fl.compress", "zfp"}, {"fl.compress_bits", "33"}}).find("fl.compress_bits = 33"),
            std::string::npos);
  EXPECT_NE(refusal({{"fl.compress", "zfp"}, {"fl.compress_bits", "8"}, {"fl.compress_tolerance", "0.1"}})
                .find("give one of them"),
            std::string::npos);
  EXPECT_EQ(refusal({{"fl.compress", "zfp"}, {"fl.compress_bits", "24"}}), "");
}
