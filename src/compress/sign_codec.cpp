#include "compress/sign_codec.hpp"

#include <cstring>

#include "compress/block_math.hpp"
#include "compress/compress_config.hpp"
#include "compress/wire.hpp"

namespace fedsilo {

std::uint8_t SignCodec::codecId() const { return static_cast<std::uint8_t>(CompressMethod::SignSgd); }

void SignCodec::encodeBlock(const float* x, std::size_t m, Rng&, ByteWriter& w) const {
  w.f32(m == 0 ? 0.0f : static_cast<float>(blockmath::norm1(x, m) / static_cast<double>(m)));
  std::uint8_t* bits = w.extend(packedBytes(m, 1));
  const std::size_t full = m / 8;
  for (std::size_t b = 0; b < full; ++b) {
    unsigned byte = 0;
    for (unsigned j = 0; j < 8; ++j) byte |= (x[8 * b + j] < 0.0f ? 1u : 0u) << j;
    bits[b] = static_cast<std::uint8_t>(byte);
  }
  if (full * 8 < m) {
    unsigned byte = 0;
    for (std::size_t i = full * 8; i < m; ++i) byte |= (x[i] < 0.0f ? 1u : 0u) << (i - full * 8);
    bits[full] = static_cast<std::uint8_t>(byte);
  }
}

void SignCodec::decodeBlock(ByteReader& r, std::size_t m, Rng&, float* out) const {
  const float scale = r.f32();
  const std::uint8_t* bits = r.take(packedBytes(m, 1));
  std::uint32_t scaleBits;
  std::memcpy(&scaleBits, &scale, 4);
  // The sign bit of each output set from its wire bit: a branch-free loop the compiler vectorises.
  for (std::size_t i = 0; i < m; ++i) {
    const std::uint32_t v = scaleBits ^ (static_cast<std::uint32_t>((bits[i >> 3] >> (i & 7)) & 1u) << 31);
    std::memcpy(out + i, &v, 4);
  }
}

std::optional<std::size_t> SignCodec::sectionBytes(std::size_t m) const { return 4 + packedBytes(m, 1); }

}  // namespace fedsilo
