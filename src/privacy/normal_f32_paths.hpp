// The instruction-set builds of the single-precision normal sampler's blocks (privacy/normal_f32_block.hpp:
// x[i] = (x[i] + stddev z[i]) scale over whole blocks of 32 values); all three give the same bits.
// Kept free of inline project code: it is included by translation units compiled for different sets.
#pragma once
#include <cstddef>
#include <cstdint>

namespace fedsilo::normal_f32 {

using BlocksFn = void (*)(float* x, std::uint64_t key, std::uint64_t first, std::size_t blocks, float stddev,
                          float scale);
void addScaledBlocksAvx512(float* x, std::uint64_t key, std::uint64_t first, std::size_t blocks, float stddev,
                           float scale);
void addScaledBlocksAvx2(float* x, std::uint64_t key, std::uint64_t first, std::size_t blocks, float stddev,
                         float scale);
void addScaledBlocksGeneric(float* x, std::uint64_t key, std::uint64_t first, std::size_t blocks, float stddev,
                            float scale);

}  // namespace fedsilo::normal_f32
