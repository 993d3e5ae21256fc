// The single-precision normal sampler's blocks compiled for AVX2 (flags: cmake/kernels.cmake).
#include "privacy/normal_f32_block.hpp"
#include "privacy/normal_f32_paths.hpp"

namespace fedsilo::normal_f32 {

void addScaledBlocksAvx2(float* x, std::uint64_t key, std::uint64_t first, std::size_t blocks, float stddev,
                         float scale) {
  addScaledBlocks(x, key, first, blocks, stddev, scale);
}

}  // namespace fedsilo::normal_f32
