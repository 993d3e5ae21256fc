#include "compress/registry.hpp"

#include "compress/identity_codec.hpp"
#include "compress/qsgd_codec.hpp"
#include "compress/randk_codec.hpp"
#include "compress/sign_codec.hpp"
#include "compress/topk_codec.hpp"
#include "compress/zfp_codec.hpp"
#include "core/error.hpp"

namespace fedsilo {

namespace {

std::unique_ptr<Compressor> makeNone(const CompressConfig&) { return std::make_unique<IdentityCodec>(); }
std::unique_ptr<Compressor> makeQsgd(const CompressConfig& c) {
  return std::make_unique<QsgdCodec>(c.bitsOr(CompressConfig::kDefaultQsgdBits));
}
std::unique_ptr<Compressor> makeTopK(const CompressConfig& c) { return std::make_unique<TopKCodec>(c.ratioOrDefault()); }
std::unique_ptr<Compressor> makeRandK(const CompressConfig& c) {
  return std::make_unique<RandKCodec>(c.ratioOrDefault());
}
std::unique_ptr<Compressor> makeSign(const CompressConfig&) { return std::make_unique<SignCodec>(); }
std::unique_ptr<Compressor> makeZfp(const CompressConfig& c) { return makeZfpCodec(c); }

}  // namespace

const std::vector<CompressorEntry>& compressorTable() {
  using M = CompressMethod;
  static const std::vector<CompressorEntry> table = {
      {M::None, "none", "the dense float update", makeNone},
      {M::Qsgd, "qsgd", "stochastic unbiased quantisation to 2^bits - 1 levels of each block's 2-norm", makeQsgd},
      {M::TopK, "topk", "the largest-magnitude fraction `ratio` of each block, with indices", makeTopK},
      {M::RandK, "randk", "a keyed random fraction `ratio` of each block, scaled by 1/ratio (unbiased)", makeRandK},
      {M::SignSgd, "signsgd", "each element's sign, scaled by the block's mean |x|", makeSign},
      {M::Zfp, "zfp", "the ZFP library, fixed accuracy (tolerance) or fixed rate (bits); needs FEDSILO_ZFP", makeZfp},
  };
  return table;
}

const char* compressMethodName(CompressMethod m) {
  for (const CompressorEntry& e : compressorTable())
    if (e.method == m) return e.name;
  FEDSILO_ASSERT(false, "compress method ", int(m), " is not in the table");
  return "";
}

CompressMethod parseCompressMethod(const std::string& name) {
  std::string names;
  for (const CompressorEntry& e : compressorTable()) {
    if (name == e.name) return e.method;
    names += names.empty() ? e.name : std::string("|") + e.name;
  }
  throw ConfigError(fmt("fl.compress = ", name, ": expected ", names));
}

std::unique_ptr<Compressor> makeCompressor(const CompressConfig& config) {
  validateCompressConfig(config);
  for (const CompressorEntry& e : compressorTable())
    if (e.method == config.method) return e.make(config);
  FEDSILO_ASSERT(false, "compress method ", int(config.method), " is not in the table");
  return nullptr;
}

}  // namespace fedsilo
