#include "compress/qsgd_codec.hpp"

#include <algorithm>
#include <cmath>

#include "compress/block_math.hpp"
#include "compress/compress_config.hpp"
#include "compress/wire.hpp"
#include "core/error.hpp"

namespace fedsilo {

namespace {

// Elements quantised per batch of random numbers: small enough to stay in L1.
constexpr std::size_t kChunk = 512;

// n uniforms in [0, 1) with 24 random bits each, two per 64-bit draw (a float holds 24 bits exactly; the
// rounding-up probability is then off by less than 2^-24).
void uniforms24(Rng& rng, float* u, std::size_t n) {
  constexpr float kScale = 1.0f / 16777216.0f;
  std::size_t i = 0;
  for (; i + 1 < n; i += 2) {
    const std::uint64_t b = rng.next();
    u[i] = static_cast<float>(b >> 40) * kScale;
    u[i + 1] = static_cast<float>(b & 0xFFFFFFu) * kScale;
  }
  if (i < n) u[i] = static_cast<float>(rng.next() >> 40) * kScale;
}

// The codes of one chunk: level l_i in the low `bits`, the sign above it (0 for level 0). A plain
// elementwise loop the compiler vectorises.
void quantise(const float* x, const float* u, std::size_t n, float scale, std::uint32_t levels, unsigned bits,
              std::uint32_t* code) {
  const float top = static_cast<float>(levels);
  for (std::size_t i = 0; i < n; ++i) {
    const float r = std::fabs(x[i]) * scale;
    const float low = std::floor(r);
    const float level = std::min(low + (u[i] < r - low ? 1.0f : 0.0f), top);
    // Signed conversion and bitwise logic (no && or unsigned conversion) keep the loop vectorisable.
    const auto l = static_cast<std::int32_t>(level);
    const std::int32_t negative = static_cast<std::int32_t>(x[i] < 0.0f) & static_cast<std::int32_t>(l != 0);
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
  BitPacker pack(w.extend(packedBytes(m, bits_ + 1)), bits_ + 1);
  float u[kChunk];
  std::uint32_t code[kChunk];
  for (std::size_t at = 0; at < m; at += kChunk) {
    const std::size_t n = std::min(kChunk, m - at);
    uniforms24(rng, u, n);
    quantise(x + at, u, n, scale, levels_, bits_, code);
    for (std::size_t i = 0; i < n; ++i) pack.put(code[i]);
  }
  pack.finish();
}

void QsgdCodec::decodeBlock(ByteReader& r, std::size_t m, Rng&, float* out) const {
  const float norm = r.f32();
  const float unit = static_cast<float>(double(norm) / levels_);
  BitUnpacker unpack(r.take(packedBytes(m, bits_ + 1)), bits_ + 1);
  const std::uint32_t levelMask = levels_;
  for (std::size_t i = 0; i < m; ++i) {
    const std::uint32_t c = unpack.get();
    const float v = static_cast<float>(c & levelMask) * unit;
    out[i] = (c >> bits_) != 0 ? -v : v;
  }
}

}  // namespace fedsilo
