// The typed compression options (fl.compress and its parameters; docs/compression.md): read and checked
// once at start-up (app/compress_options, compress/compress_config), used by src/compress and
// fl/compressed_upload.
#pragma once
#include <cstdint>
#include <optional>

namespace fedsilo {

// The values are the codec ids in the wire header: never renumber.
enum class CompressMethod : std::uint8_t { None = 0, Qsgd = 1, TopK = 2, RandK = 3, SignSgd = 4, Zfp = 5 };

struct CompressConfig {
  CompressMethod method = CompressMethod::None;
  // Each parameter is unset unless given; a given one must apply to the method (validateCompressConfig).
  std::optional<int> bits;          // qsgd: levels s = 2^bits - 1 (1..16); zfp: fixed rate in bits per value (1..32)
  std::optional<double> ratio;      // topk, randk: fraction of each block kept, in (0, 1]
  std::optional<double> tolerance;  // zfp: fixed-accuracy mode with this absolute error bound (> 0)
  bool downlink = false;            // compress the broadcast too
  bool errorFeedback = false;       // keep each client's compression residual and add it to its next update

  static constexpr int kDefaultQsgdBits = 8;
  static constexpr int kDefaultZfpRate = 16;
  static constexpr double kDefaultRatio = 0.01;

  bool active() const { return method != CompressMethod::None; }
  int bitsOr(int fallback) const { return bits.value_or(fallback); }
  double ratioOrDefault() const { return ratio.value_or(kDefaultRatio); }
};

}  // namespace fedsilo
