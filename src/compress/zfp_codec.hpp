// `zfp`: each block as a 1-D float array through the ZFP library (Lindstrom, "Fixed-Rate Compressed
// Floating-Point Arrays", IEEE TVCG 2014; github.com/LLNL/zfp), in fixed-accuracy mode (absolute error
// bound fl.compress_tolerance) or fixed-rate mode (fl.compress_bits bits per value). An optional backend:
// built only with the CMake option FEDSILO_ZFP (libzfp-dev); without it makeZfpCodec refuses with the
// ConfigError of CompressConfig::validate().
//
// Section per block: the ZFP stream's length in bytes (u32), then the stream. Fixed rate: each 1-D
// block of 4 values takes max(4 · bits, 9) bits, the stream rounded up to whole stream words (8 bits in
// Debian's build); fixed accuracy: data-dependent.
#pragma once
#include <memory>

#include "compress/compress_config.hpp"
#include "compress/compressor.hpp"

namespace fedsilo {

std::unique_ptr<Compressor> makeZfpCodec(const CompressConfig& config);

#ifdef FEDSILO_HAVE_ZFP
class ZfpCodec final : public Compressor {
 public:
  // tolerance > 0: fixed accuracy; else fixed rate at rateBits.
  ZfpCodec(double tolerance, int rateBits);
  const char* name() const override { return "zfp"; }

 protected:
  std::uint8_t codecId() const override;
  std::uint8_t parameter() const override { return static_cast<std::uint8_t>(tolerance_ > 0.0 ? 0 : rateBits_); }
  void encodeBlock(const float* x, std::size_t m, Rng& rng, ByteWriter& w) const override;
  void decodeBlock(ByteReader& r, std::size_t m, Rng& rng, float* out) const override;
  std::optional<std::size_t> sectionBytes(std::size_t m) const override;

 private:
  double tolerance_;
  int rateBits_;
};
#endif

}  // namespace fedsilo
