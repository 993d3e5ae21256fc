// The single-precision normal sampler's blocks compiled for AVX-512 (F, BW, DQ, VL) (flags: cmake/kernels.cmake).
#include "privacy/normal_f32_block.hpp"
#include "privacy/normal_f32_paths.hpp"

namespace fedsilo::normal_f32 {

void addScaledBlocksAvx512(float* x, std::uint64_t key, std::uint64_t first, std::size_t blocks, float stddev,
                           float scale) {
  addScaledBlocks(x, key, first, blocks, stddev, scale);
}

}  // namespace fedsilo::normal_f32
