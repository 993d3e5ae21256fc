// `signsgd`: each element's sign, scaled per block by the block's mean magnitude ‖x‖₁ / m (the scaled
// sign compressor of Karimireddy, Rebjock, Stich, Jaggi, "Error Feedback Fixes SignSGD and other
// Gradient Compression Schemes", ICML 2019). Biased: use it with error feedback, as there.
//
// Section per block: the scale (f32), then m sign bits (1 = negative; zero counts as positive) packed LSB
// first: 4 + ceil(m / 8) bytes.
#pragma once
#include "compress/compressor.hpp"

namespace fedsilo {

class SignCodec final : public Compressor {
 public:
  const char* name() const override { return "signsgd"; }

 protected:
  std::uint8_t codecId() const override;
  void encodeBlock(const float* x, std::size_t m, Rng& rng, ByteWriter& w) const override;
  void decodeBlock(ByteReader& r, std::size_t m, Rng& rng, float* out) const override;
  std::optional<std::size_t> sectionBytes(std::size_t m) const override;
};

}  // namespace fedsilo
