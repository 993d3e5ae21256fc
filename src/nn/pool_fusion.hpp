// Pieces shared by the fused convolution + ReLU + 2 x 2 max-pool passes of ConvDirect (fp32,
// nn/conv2d_direct.cpp) and ConvBf16 (nn/conv2d_bf16.cpp): PoolFusableT in nn/relu_fusable.hpp.
// Internal to src/nn.
#pragma once
#include <cstdint>

#include "core/types.hpp"
#include "nn/kernel_table.hpp"

namespace fedsilo {

// Values per sample of the pool's output over a convolution output of C x oh x ow (floor(oh / 2) x
// floor(ow / 2) windows per channel, as MaxPool2DT).
inline Index pooledSize(int C, int oh, int ow) { return Index(C) * (oh / 2) * (ow / 2); }

// Where a fused forward writes, for the whole batch: the pool's output and its window positions.
struct PooledOutput {
  float* y;
  std::uint8_t* pos;
};

// What a fused backward starts from, for the whole batch: the pool's output, dL/dyPool and the window
// positions of the forward.
struct PooledGradient {
  const float* y;
  const float* dy;
  const std::uint8_t* pos;
};

// The ReLU's output planes of nb samples (C x oh x ow each, one after the other) pooled into yPool and
// the window positions pos (nn/pool_kernels.hpp), as MaxPool2DT::forward does.
inline void poolPlanes(const float* planes, int nb, int C, int oh, int ow, float* yPool, std::uint8_t* pos) {
  kernels::active().pool.maxPool2x2(planes, Index(nb) * C, oh, ow, yPool, pos);
}

// dz (nb samples of C x oh x ow) = what the ReLU's backward makes of the pool's backward: dL/dyPool masked
// where yPool is not > 0 (into masked: nb x pooledSize values), then spread by the pool's dense backward.
// At a window's winner the ReLU's output is yPool itself and elsewhere the pool passes back 0, so these
// are the same values, bit for bit, as the layer-by-layer passes give.
inline void expandPooledGradient(const float* yPool, const float* dyPool, const std::uint8_t* pos, int nb, int C,
                                 int oh, int ow, float* masked, float* dz) {
  kernels::active().dense.reluMask(yPool, dyPool, masked, nb * pooledSize(C, oh, ow));
  kernels::active().pool.maxPool2x2Backward(masked, pos, Index(nb) * C, oh, ow, dz);
}

// poolPlanes for the nb samples from sample b0 of the batch into `out`.
inline void poolChunk(const float* planes, int b0, int nb, int C, int oh, int ow, const PooledOutput& out) {
  const Index at = b0 * pooledSize(C, oh, ow);
  poolPlanes(planes, nb, C, oh, ow, out.y + at, out.pos + at);
}

// expandPooledGradient for the nb samples from sample b0 of the batch.
inline void expandPooledChunk(const PooledGradient& from, int b0, int nb, int C, int oh, int ow, float* masked,
                              float* dz) {
  const Index at = b0 * pooledSize(C, oh, ow);
  expandPooledGradient(from.y + at, from.dy + at, from.pos + at, nb, C, oh, ow, masked, dz);
}

}  // namespace fedsilo
