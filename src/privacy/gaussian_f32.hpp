// Single-precision N(0, 1) noise for DP-SGD's per-step release: one draw per model parameter per step,
// added to a float gradient, where the double-precision ziggurat (privacy/gaussian.hpp) costs more than
// the rest of a DP step of the MLP at small batches. Box-Muller on counter-mode 64-bit draws, vectorised
// (privacy/normal_f32_block.hpp). Opacus draws DP-SGD's noise the same way, in the gradient's precision
// (torch.normal on float32 tensors).
//
// Precision: U1 has 24 bits, so |z| <= sqrt(-2 ln 2^-24) = 5.77 (the normal puts 8e-9 of its mass beyond);
// log, sin and cos are series evaluated in float (relative error of a draw about 1e-6). Noise drawn once
// per round (client-level DP) keeps the exact double-precision ziggurat.
#pragma once
#include <cstddef>

#include "core/rng.hpp"

namespace fedsilo {

// The builds of the sampler: all give the same bits; the fastest the CPU runs is used.
enum class NormalF32Build : int { Generic = 0, Avx2 = 1, Avx512 = 2 };
NormalF32Build bestNormalF32Build();

// x[i] = (x[i] + stddev z_i) scale for i < n, in float (the sum rounded before the product), z_i the
// i-th N(0, 1) draw of the stream keyed by one draw of `key`: value i depends on the key and i only, so
// the first m values of any call are those of a call with n = m. No allocation.
void addScaledNormalsF32(float* x, std::size_t n, float stddev, Rng& key, float scale = 1.0f);
// The same with a chosen build (tests: the builds agree); `build` must be one the CPU runs.
void addScaledNormalsF32(float* x, std::size_t n, float stddev, Rng& key, float scale, NormalF32Build build);

}  // namespace fedsilo
