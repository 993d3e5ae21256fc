#include "privacy/gaussian_f32.hpp"

#include <algorithm>

#include "privacy/normal_f32_paths.hpp"

namespace fedsilo {

namespace {

constexpr std::size_t kBlock = 32;  // normal_f32::kBlock (the block header is compiled per instruction set)

normal_f32::BlocksFn blocksFor(NormalF32Build build) {
  switch (build) {
    case NormalF32Build::Avx512: return normal_f32::addScaledBlocksAvx512;
    case NormalF32Build::Avx2: return normal_f32::addScaledBlocksAvx2;
    case NormalF32Build::Generic: break;
  }
  return normal_f32::addScaledBlocksGeneric;
}

}  // namespace

// The same test as nn/kernels.cpp's cpuIsa (privacy does not depend on nn); the builds give the same bits,
// so ranks on different CPUs still draw the same noise.
NormalF32Build bestNormalF32Build() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma"))
    return NormalF32Build::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return NormalF32Build::Avx2;
  return NormalF32Build::Generic;
}

void addScaledNormalsF32(float* x, std::size_t n, float stddev, Rng& key, float scale, NormalF32Build build) {
  const std::uint64_t streamKey = key.next();
  const normal_f32::BlocksFn blocks = blocksFor(build);
  const std::size_t whole = n / kBlock, rest = n % kBlock;
  blocks(x, streamKey, 0, whole, stddev, scale);
  if (rest == 0) return;
  // The partial last block: drawn whole on a copy, its first `rest` values kept.
  float last[kBlock] = {};
  float* tail = x + whole * kBlock;
  std::copy(tail, tail + rest, last);
  blocks(last, streamKey, whole, 1, stddev, scale);
  std::copy(last, last + rest, tail);
}

void addScaledNormalsF32(float* x, std::size_t n, float stddev, Rng& key, float scale) {
  static const NormalF32Build best = bestNormalF32Build();
  addScaledNormalsF32(x, n, stddev, key, scale, best);
}

}  // namespace fedsilo
