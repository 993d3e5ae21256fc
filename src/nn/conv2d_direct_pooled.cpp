// ConvDirect's fused convolution + ReLU + 2 x 2 max-pool passes (nn/conv2d_direct.hpp: forwardPooled,
// backwardPooled; ModelT runs them through PoolFusableT where a model has that sequence). They are
// ConvDirect::forward and ConvDirect::backward with relu = true, chunk by chunk, except where the
// ReLU's output and dL/dz live: a chunk's output planes are pooled while in cache (and never stored),
// and a chunk's dL/dz is rebuilt in cache from the pool's output, gradient and window positions
// (nn/pool_fusion.hpp) instead of read back from a dense dL/dy the pool wrote and the ReLU's output.
// The values reaching the GEMM kernels, the bias sums and the pool are the same, so are the results.
#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "nn/conv2d_direct.hpp"
#include "nn/kernel_table.hpp"
#include "nn/pool_fusion.hpp"

namespace fedsilo {

void ConvDirect::reservePooled() {
  FEDSILO_ASSERT(maxBatch_ > 0, "conv2d: reservePooled before reserve");
  if (bf16_) return;  // ConvBf16::reserve holds its own
  const Index masked = chunk_ * pooledSize(g_.outC, g_.oh, g_.ow), dz = chunk_ * g_.outSize;
  if (static_cast<Index>(dzChunk_.size()) >= dz) return;
  allocateOrFail(fmt("the conv2d ", g_.inC, "x", g_.h, "x", g_.w, " -> ", g_.outC, " pooling workspace for ", chunk_,
                     " samples"),
                 bytesOf<float>(static_cast<std::uint64_t>(masked + dz)), [&] {
                   pooledDz_.assign(static_cast<std::size_t>(masked), 0.0f);
                   dzChunk_.assign(static_cast<std::size_t>(dz), 0.0f);
                 });
}

void ConvDirect::forwardPooled(const float* w, const float* bias, const float* x, float* yPool, std::uint8_t* pos,
                               int batch) {
  FEDSILO_ASSERT(batch <= maxBatch_, "conv2d: batch ", batch, " exceeds reserved ", maxBatch_);
  if (bf16_) return bf16_->forwardPooled(w, bias, x, yPool, pos, batch);
  const kernels::ConvKernels& kc = kernels::active().conv;
  packWeights(w);
  const Index pooled = pooledSize(g_.outC, g_.oh, g_.ow);
  for (int b0 = 0; b0 < batch; b0 += chunk_) {
    const int nb = std::min(chunk_, batch - b0);
    padInput(x, b0, nb);
    kc.gemm(in_.data.data(), in_.rowBase.data(), nb * g_.ohw, in_.tap.data(), static_cast<int>(g_.kdim), wt_.data(),
            ldw_, g_.outC, z_.data(), ldw_, spanOf(in_), g_.k);
    kc.rowsToPlanes(z_.data(), ldw_, bias, true, nb, g_.outC, g_.ohw, dzChunk_.data(), g_.outSize);
    poolPlanes(dzChunk_.data(), nb, g_.outC, g_.oh, g_.ow, yPool + b0 * pooled, pos + b0 * pooled);
  }
}

void ConvDirect::padGradientChunk(const float* dz, int nb) {
  const int off = g_.k - 1 - g_.pad;
  const Index plane = Index(grad_.rows) * grad_.cols;
  for (int b = 0; b < nb; ++b)
    for (int c = 0; c < g_.outC; ++c) {
      const float* src = dz + b * g_.outSize + c * g_.ohw;
      float* dst = grad_.data.data() + b * grad_.perSample() + c * plane;
      for (int r = 0; r < g_.oh; ++r) {
        const float* g = src + Index(r) * g_.ow;
        float* d = dst + Index(off + r * g_.stride) * grad_.cols + off;
        if (g_.stride == 1)
          std::memcpy(d, g, sizeof(float) * g_.ow);
        else
          for (int j = 0; j < g_.ow; ++j) d[j * g_.stride] = g[j];
      }
    }
}

void ConvDirect::backwardPooled(const float* w, float* dw, float* db, const float* x, const float* yPool,
                                const float* dyPool, const std::uint8_t* pos, float* dx, int batch) {
  FEDSILO_ASSERT(batch <= maxBatch_, "conv2d: batch ", batch, " exceeds reserved ", maxBatch_);
  if (bf16_) return bf16_->backwardPooled(w, dw, db, x, yPool, dyPool, pos, dx, batch);
  std::fill(db, db + g_.outC, 0.0f);
  const kernels::ConvKernels& kc = kernels::active().conv;
  if (dx) packFlippedWeights(w);
  const Index hw = Index(g_.h) * g_.w, pooled = pooledSize(g_.outC, g_.oh, g_.ow);
  for (int b0 = 0; b0 < batch; b0 += chunk_) {
    const int nb = std::min(chunk_, batch - b0);
    expandPooledGradient(yPool + b0 * pooled, dyPool + b0 * pooled, pos + b0 * pooled, nb, g_.outC, g_.oh, g_.ow,
                         pooledDz_.data(), dzChunk_.data());
    padInput(x, b0, nb);
    kc.planesToRows(dzChunk_.data(), nullptr, nb, g_.outC, g_.ohw, g_.outSize, z_.data(), ldw_);
    addBiasGradient(nb, db);
    kc.wgrad(in_.data.data(), in_.rowBase.data(), nb * g_.ohw, in_.tap.data(), static_cast<int>(g_.kdim), z_.data(),
             ldw_, g_.outC, dwt_.data(), ldw_, b0 > 0);
    if (!dx) continue;
    padGradientChunk(dzChunk_.data(), nb);
    kc.gemm(grad_.data.data(), grad_.rowBase.data(), nb * hw, grad_.tap.data(), g_.outC * g_.k * g_.k, wtD_.data(),
            ldwD_, g_.inC, zD_.data(), ldwD_, spanOf(grad_), g_.k);
    kc.rowsToPlanes(zD_.data(), ldwD_, nullptr, false, nb, g_.inC, hw, dx + b0 * g_.inSize, g_.inSize);
  }
  kc.rowsToPlanes(dwt_.data(), ldw_, nullptr, false, 1, g_.outC, g_.kdim, dw, 0);
}

}  // namespace fedsilo
