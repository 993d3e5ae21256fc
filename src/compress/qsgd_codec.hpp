// `qsgd`: stochastic unbiased quantisation (Alistarh, Grubic, Li, Tomioka, Vojnovic, "QSGD:
// Communication-Efficient SGD via Gradient Quantization and Encoding", NeurIPS 2017). Per block with
// 2-norm ‖x‖ and s = 2^bits - 1 levels: x_i is sent as sign(x_i) · ‖x‖ · l_i / s, where l_i is
// floor(s |x_i| / ‖x‖) rounded up with probability equal to the fraction it drops, so E[decoded] = x.
//
// Section per block: the norm (f32, 4 bytes), then m codes of bits + 1 bits (the level, the sign bit
// above it), packed LSB first: 4 + ceil(m (bits + 1) / 8) bytes. Fixed width, no Elias coding, so the
// size depends on the layout only.
#pragma once
#include "compress/compressor.hpp"

namespace fedsilo {

class QsgdCodec final : public Compressor {
 public:
  explicit QsgdCodec(int bits);
  const char* name() const override { return "qsgd"; }
  int levels() const { return static_cast<int>(levels_); }

 protected:
  std::uint8_t codecId() const override;
  std::uint8_t parameter() const override { return static_cast<std::uint8_t>(bits_); }
  void encodeBlock(const float* x, std::size_t m, Rng& rng, ByteWriter& w) const override;
  void decodeBlock(ByteReader& r, std::size_t m, Rng& rng, float* out) const override;
  std::optional<std::size_t> sectionBytes(std::size_t m) const override;

 private:
  unsigned bits_;
  std::uint32_t levels_;
};

}  // namespace fedsilo
