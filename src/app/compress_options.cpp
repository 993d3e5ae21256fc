#include "app/compress_options.hpp"

#include "compress/compress_config.hpp"
#include "compress/registry.hpp"
#include "core/strings.hpp"
#include "fl/compressed_upload.hpp"

namespace fedsilo {

namespace {

std::string methodList() {
  std::string out;
  for (const CompressorEntry& e : compressorTable()) out += (out.empty() ? "" : " | ") + std::string(e.name);
  return out;
}

}  // namespace

std::vector<OptionSpec> compressOptions() {
  return {
      {"fl.compress", "none",
       "what each silo uploads instead of its dense update (local - downloaded, per federated block): " +
           methodList() + " (zfp only in builds with -DFEDSILO_ZFP=ON; docs/compression.md)"},
      {"fl.compress_bits", "",
       "qsgd: bits per level, 1..16 (empty: 8); zfp: fixed rate in bits per value, 1..32 (empty: 16)"},
      {"fl.compress_ratio", "", "topk, randk: fraction of each block kept, in (0, 1] (empty: 0.01)"},
      {"fl.compress_tolerance", "", "zfp: fixed-accuracy mode with this absolute error bound > 0 (instead of bits)"},
      {"fl.compress_downlink", "false", "compress the broadcast too (the change of the global model each round)"},
      {"fl.error_feedback", "false",
       "each silo keeps its compression residual and adds it to its next update (with fl.compress_downlink the "
       "server keeps one for the broadcast)"},
  };
}

CompressConfig readCompress(const std::map<std::string, std::string>& values, const ExperimentConfig& cfg) {
  // An empty value is an option not given: parseCompressConfig refuses a parameter given for a method
  // it does not apply to, and the false defaults of the two switches are not "given".
  std::map<std::string, std::string> given;
  for (const OptionSpec& o : compressOptions()) {
    const auto it = values.find(o.key);
    if (it == values.end() || trim(it->second).empty()) continue;
    given[o.key] = it->second;
  }
  CompressConfig c = parseCompressConfig(given);
  ExperimentConfig withCompression = cfg;
  withCompression.compress = c;
  refuseUnsoundCompression(withCompression);
  return c;
}

}  // namespace fedsilo
