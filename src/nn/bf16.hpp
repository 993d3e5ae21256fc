// bf16 mixed precision (train.precision = bf16): the three products (forward, weight gradient, input
// gradient) of the convolutions and the dense layers take bf16 operands with fp32 accumulation on
// AVX512-BF16 (VDPBF16PS), in training and evaluation; weights stay fp32 (bf16 copies are packed from
// them at every call), as do the biases, the optimizer, the aggregation and everything else. Operands
// are rounded to nearest even, so results are deterministic, and nothing depends on the rank. AMX-BF16
// is not used.
#pragma once
#include <cstdint>
#include <string>

namespace fedsilo {

// What this process lacks for bf16: "" when the CPU has AVX512-BF16 and the active kernel set is
// avx512 (nn/kernels.hpp), else a few words naming what is missing.
std::string bf16Missing();

// The process's precision for the convolutions and dense layers, chosen once before any model is
// built (layers look at it when they are constructed); off by default. Throws ConfigError where
// bf16Missing() is not "".
void selectBf16(bool on);
bool bf16Active();

// fp32 -> bf16, rounded to nearest even (a NaN stays a NaN, made quiet), as VCVTNEPS2BF16 for normal
// numbers. Branch-free, so that the packing loops vectorise.
inline std::uint16_t toBf16(float f) {
  std::uint32_t u;
  __builtin_memcpy(&u, &f, sizeof u);
  const std::uint32_t rounded = u + 0x7FFFu + ((u >> 16) & 1u);
  const std::uint32_t nan = u | 0x400000u;
  return static_cast<std::uint16_t>(((u & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded) >> 16);
}
inline float fromBf16(std::uint16_t h) {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f;
  __builtin_memcpy(&f, &u, sizeof f);
  return f;
}
// Two values as one VDPBF16PS operand word: lo in the low half.
inline std::uint32_t bf16Pair(float lo, float hi) {
  return static_cast<std::uint32_t>(toBf16(lo)) | (static_cast<std::uint32_t>(toBf16(hi)) << 16);
}

}  // namespace fedsilo
