#include "compress/qsgd_codec.hpp"

#include <algorithm>
#include <cmath>

#include "compress/block_math.hpp"
#include "compress/compress_config.hpp"
#include "compress/wire.hpp"
#include "core/error.hpp"

namespace fedsilo {

namespace {

// Elements quantised per batch of random numbers: small enough to stay in L1, a multiple of 8 (whole
// groups of packed codes per chunk).
constexpr std::size_t kChunk = 512;
static_assert(kChunk % 8 == 0);

// n uniforms in [0, 1) with 24 random bits each, two per 64-bit draw (a float holds 24 bits exactly; the
// rounding-up probability is then off by less than 2^-24). The draws come first, then one conversion
// loop the compiler vectorises (through int32: 24 bits convert exactly).
void uniforms24(Rng& rng, float* u, std::size_t n) {
  constexpr float kScale = 1.0f / 16777216.0f;
  std::uint64_t draws[kChunk / 2 + 1];
  const std::size_t pairs = (n + 1) / 2;
  for (std::size_t j = 0; j < pairs; ++j) draws[j] = rng.next();
  std::int32_t bits24[kChunk + 1];
  for (std::size_t j = 0; j < pairs; ++j) {
    bits24[2 * j] = static_cast<std::int32_t>(draws[j] >> 40);
    bits24[2 * j + 1] = static_cast<std::int32_t>(draws[j] & 0xFFFFFFu);
  }
  for (std::size_t i = 0; i < n; ++i) u[i] = static_cast<float>(bits24[i]) * kScale;
}

// The codes of one chunk: level l_i in the low `bits`, the sign above it (0 for level 0). Integer
// selects instead of branches and restrict pointers keep the loop vectorised; r >= 0, so truncation is
// the floor.
void quantise(const float* __restrict x, const float* __restrict u, std::size_t n, float scale, std::int32_t levels,
              unsigned bits, std::uint32_t* __restrict code) {
  for (std::size_t i = 0; i < n; ++i) {
    const float r = std::fabs(x[i]) * scale;
    const auto low = static_cast<std::int32_t>(r);
    const std::int32_t up = u[i] < r - static_cast<float>(low) ? 1 : 0;
    const std::int32_t l = std::min(low + up, levels);
    const std::int32_t negative = x[i] < 0.0f && l != 0 ? 1 : 0;
    code[i] = static_cast<std::uint32_t>(l | (negative << bits));
  }
}

}  // namespace

QsgdCodec::QsgdCodec(int bits) : bits_(static_cast<unsigned>(bits)), levels_((1u << bits) - 1u) {
  FEDSILO_ASSERT(bits >= 1 && bits <= 16, "qsgd bits ", bits);
}

std::uint8_t QsgdCodec::codecId() const { return static_cast<std::uint8_t>(CompressMethod::Qsgd); }

void QsgdCodec::encodeBlock(const float* x, std::size_t m, Rng& rng, ByteWriter& w) const {
  const auto norm = static_cast<float>(blockmath::norm2(x, m));
  w.f32(norm);
  // A zero (or non-finite) norm quantises every element to level 0.
  const float scale = norm > 0.0f && std::isfinite(norm) ? static_cast<float>(levels_ / double(norm)) : 0.0f;
  const unsigned width = bits_ + 1;
  std::uint8_t* packed = w.extend(packedBytes(m, width));
  float u[kChunk];
  std::uint32_t code[kChunk];
  // kChunk is a multiple of 8, so every chunk starts on a byte boundary of the packed codes.
  for (std::size_t at = 0; at < m; at += kChunk) {
    const std::size_t n = std::min(kChunk, m - at);
    uniforms24(rng, u, n);
    quantise(x + at, u, n, scale, static_cast<std::int32_t>(levels_), bits_, code);
    packCodes(code, n, width, packed + at / 8 * width);
  }
}

void QsgdCodec::decodeBlock(ByteReader& r, std::size_t m, Rng&, float* out) const {
  const float norm = r.f32();
  const float unit = static_cast<float>(double(norm) / levels_);
  const unsigned width = bits_ + 1;
  const std::uint8_t* packed = r.take(packedBytes(m, width));
  const std::uint32_t levelMask = levels_;
  std::uint32_t code[kChunk];
  for (std::size_t at = 0; at < m; at += kChunk) {
    const std::size_t n = std::min(kChunk, m - at);
    unpackCodes(packed + at / 8 * width, n, width, code);
    float* o = out + at;
    for (std::size_t i = 0; i < n; ++i) {  // vectorised: the sign as a mask, no branch
      const float v = static_cast<float>(code[i] & levelMask) * unit;
      o[i] = (code[i] >> bits_) != 0 ? -v : v;
    }
  }
}

std::optional<std::size_t> QsgdCodec::sectionBytes(std::size_t m) const { return 4 + packedBytes(m, bits_ + 1); }

}  // namespace fedsilo
