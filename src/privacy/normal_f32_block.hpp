// The body of the single-precision normal sampler (privacy/gaussian_f32.hpp), included by one translation
// unit per instruction set (normal_f32_<set>.cpp, compiled with that set's flags by cmake/kernels.cmake).
// Plain loops over a block of 16 lanes that the compiler vectorises; every operation on a value is an
// integer operation or a correctly rounded IEEE one (+, -, *, /, sqrt, conversions) and contraction into
// fused multiply-adds is off for these files, so the scalar, SSE, AVX2 and AVX-512 code computes the same
// bits.
//
// Box-Muller (Box and Muller 1958, "A Note on the Generation of Random Normal Deviates", Ann. Math.
// Statist. 29(2)): from U1 in (0, 1] and an angle T uniform in [0, 2 pi), sqrt(-2 ln U1) (cos T, sin T) are
// two independent N(0, 1) draws. Pair c of a key takes both uniforms from one 64-bit SplitMix64 output
// (Steele, Lea and Flood 2014) of key + c * gamma: 24 bits for U1, 2 bits for the quadrant of T and 24
// bits for T within it; U1's smallest value takes more bits (tailMinusLog), so the tails are exact. Values are laid out in blocks of 32: pair l of block b gives value 32 b + l
// (cosine) and value 32 b + 16 + l (sine), so that both stores are contiguous.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace fedsilo::normal_f32 {
// Internal linkage: each instruction-set file keeps its own copy (one inline definition shared by the
// linker could run AVX-512 code from the generic build).
namespace {

constexpr int kPairs = 16;          // pairs per block
constexpr int kBlock = 2 * kPairs;  // values per block
constexpr float kLn2 = 0.693147180559945f;

inline std::uint64_t pairBits(std::uint64_t key, std::uint64_t pair) {
  std::uint64_t z = key + pair * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline float fromBits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

inline std::uint32_t toBits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// -ln(k 2^-24) for k in [1, 2^24]: k = m 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s) with
// s = (m - 1) / (m + 1), |s| < 0.172, by its series to s^9 (truncation below 1e-8 relative).
inline float minusLogUnit(std::uint32_t k) {
  const std::uint32_t bits = toBits(static_cast<float>(k));  // exact: k <= 2^24
  const bool high = (bits & 0x7fffffu) > 0x3504f3u;          // mantissa above sqrt(2)
  const float m = fromBits((bits & 0x7fffffu) | (high ? 0x3f000000u : 0x3f800000u));
  const int e = static_cast<int>(bits >> 23) - 127 + (high ? 1 : 0);
  const float s = (m - 1.0f) / (m + 1.0f), s2 = s * s;
  const float series = 1.0f + s2 * (1.0f / 3 + s2 * (1.0f / 5 + s2 * (1.0f / 7 + s2 * (1.0f / 9))));
  const float lnM = 2.0f * s * series;
  return static_cast<float>(24 - e) * kLn2 - lnM;
}

// The tail of U1 (exact tails: no radius is out of reach). The smallest 24-bit value, U1 = 2^-24,
// stands for U1 in (0, 2^-24]; there U1 = 2^-24 U' with U' drawn as U1 was, from the pair's own tail
// stream, again while U' is the smallest value. So -ln U1 = 24 ln 2 levels + (-ln U'), and
// P(-ln U1 >= t) equals e^-t at every point t the sampler can return, however far out: the
// truncation at sqrt(-2 ln 2^-24) = 5.77 of a plain 24-bit U1 is gone. One pair in 2^24 comes here.
inline float tailMinusLog(std::uint64_t key, std::uint64_t pair) {
  const std::uint64_t tailKey = pairBits(key ^ 0x5851f42d4c957f2dULL, pair);
  for (std::uint64_t level = 1;; ++level) {
    const std::uint32_t k = static_cast<std::uint32_t>(pairBits(tailKey, level) & 0xffffffu) + 1u;
    if (k != 1u) return static_cast<float>(24 * level) * kLn2 + minusLogUnit(k);
  }
}

// Block `block` of the key's stream: z[l] and z[16 + l] from pair 16 block + l.
inline void normalBlock(std::uint64_t key, std::uint64_t block, float* z) {
  constexpr float kQuarterPi = 0.785398163397448f;
  float minusLog[kPairs];
  std::uint32_t unitBits[kPairs], angleBits[kPairs];
  for (int l = 0; l < kPairs; ++l) {
    const std::uint64_t h = pairBits(key, block * kPairs + static_cast<std::uint64_t>(l));
    unitBits[l] = static_cast<std::uint32_t>(h & 0xffffffu);
    angleBits[l] = static_cast<std::uint32_t>(h >> 32);
    minusLog[l] = minusLogUnit(unitBits[l] + 1u);
  }
  for (int l = 0; l < kPairs; ++l)
    if (unitBits[l] == 0u) minusLog[l] = tailMinusLog(key, block * kPairs + static_cast<std::uint64_t>(l));
  for (int l = 0; l < kPairs; ++l) {
    // sqrt(-2 ln U1) / sqrt(2): the 1 / sqrt(2) of the rotation by pi / 4 below.
    const float radius = std::sqrt(minusLog[l]);
    const std::uint32_t hi = angleBits[l];
    // T = quadrant pi / 2 + pi / 4 + a, a uniform in [-pi / 4, pi / 4): Taylor series of sin a and cos a
    // to a^9 and a^8 (error below 4e-8 there).
    const float a = (static_cast<float>((hi >> 6) & 0xffffffu) * 0x1p-24f - 0.5f) * (2.0f * kQuarterPi);
    const float a2 = a * a;
    const float sinA = a + a * a2 * (-1.0f / 6 + a2 * (1.0f / 120 + a2 * (-1.0f / 5040 + a2 * (1.0f / 362880))));
    const float cosA = 1.0f + a2 * (-0.5f + a2 * (1.0f / 24 + a2 * (-1.0f / 720 + a2 * (1.0f / 40320))));
    // cos(pi / 4 + a) sqrt(2) = cos a - sin a, sin(pi / 4 + a) sqrt(2) = cos a + sin a; then the quadrant
    // q turns (c, s) by q quarter turns: (c, s), (-s, c), (-c, -s), (s, -c).
    const float c = radius * (cosA - sinA), s = radius * (cosA + sinA);
    const std::uint32_t q = hi >> 30;
    const float first = (q & 1u) ? s : c, second = (q & 1u) ? c : s;
    z[l] = ((q ^ (q >> 1)) & 1u) ? -first : first;
    z[kPairs + l] = (q >> 1) ? -second : second;
  }
}

// x[i] = (x[i] + stddev z[i]) scale over `blocks` whole blocks starting at block `first` (x its start).
inline void addScaledBlocks(float* x, std::uint64_t key, std::uint64_t first, std::size_t blocks, float stddev,
                            float scale) {
  for (std::size_t b = 0; b < blocks; ++b) {
    float z[kBlock];
    normalBlock(key, first + b, z);
    float* xb = x + b * kBlock;
    for (int i = 0; i < kBlock; ++i) xb[i] = (xb[i] + stddev * z[i]) * scale;
  }
}

}  // namespace
}  // namespace fedsilo::normal_f32
