#include "nn/conv2d_direct.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "nn/bf16.hpp"
#include "nn/conv_gather.hpp"
#include "nn/kernel_table.hpp"

namespace fedsilo {

namespace {

// Bytes of the per-chunk buffers: they are reused by the three products of a chunk, and measured fastest
// when they stay in a core's L2 (docs/performance.md).
constexpr Index kChunkBytes = Index(768) << 10;

int roundUp16(int n) { return (n + 15) / 16 * 16; }

}  // namespace

ConvDirect::ConvDirect(int inC, int h, int w, int outC, int k, int stride, int pad)
    : inC_(inC), h_(h), w_(w), outC_(outC), k_(k), stride_(stride), pad_(pad) {
  FEDSILO_ASSERT(pad <= k - 1, "conv2d: the direct path needs pad <= k - 1");
  oh_ = (h + 2 * pad - k) / stride + 1;
  ow_ = (w + 2 * pad - k) / stride + 1;
  ohw_ = static_cast<Index>(oh_) * ow_;
  kdim_ = static_cast<Index>(inC) * k * k;
  inSize_ = static_cast<Index>(inC) * h * w;
  outSize_ = static_cast<Index>(outC) * ohw_;
  ldw_ = roundUp16(outC);
  ldwD_ = roundUp16(inC);
  in_.channels = inC;
  in_.rows = h + 2 * pad;
  in_.cols = w + 2 * pad;
  // dL/dx is the stride-1 convolution of dZ (dilated by the stride) padded by k - 1 - pad.
  grad_.channels = outC;
  grad_.rows = h + k - 1;
  grad_.cols = w + k - 1;
  if (bf16Active()) bf16_ = std::make_unique<ConvBf16>(inC, h, w, outC, k, stride, pad);
}

void ConvDirect::reserve(int maxBatch) {
  FEDSILO_ASSERT(maxBatch > 0);
  if (maxBatch <= maxBatch_) return;
  maxBatch_ = maxBatch;
  const Index hw = static_cast<Index>(h_) * w_;
  const Index perSample = (in_.perSample() + ohw_ * ldw_ + grad_.perSample() + hw * ldwD_) * Index(sizeof(float));
  chunk_ = static_cast<int>(std::clamp<Index>(kChunkBytes / perSample, 1, maxBatch));
  if (bf16_) {  // the fp32 buffers stay empty
    bf16_->reserve(chunk_);
    return;
  }
  const Index weights = 2 * kdim_ * ldw_ + Index(outC_) * k_ * k_ * ldwD_;
  allocateOrFail(fmt("the conv2d ", inC_, "x", h_, "x", w_, " -> ", outC_, " workspace for ", chunk_, " samples"),
                 static_cast<std::uint64_t>(chunk_ * perSample + weights * Index(sizeof(float))), [&] {
                   in_.data.assign(static_cast<std::size_t>(chunk_ * in_.perSample()), 0.0f);
                   grad_.data.assign(static_cast<std::size_t>(chunk_ * grad_.perSample()), 0.0f);
                   z_.assign(static_cast<std::size_t>(chunk_ * ohw_ * ldw_), 0.0f);
                   zD_.assign(static_cast<std::size_t>(chunk_ * hw * ldwD_), 0.0f);
                   wt_.assign(static_cast<std::size_t>(kdim_ * ldw_), 0.0f);
                   dwt_.assign(static_cast<std::size_t>(kdim_ * ldw_), 0.0f);
                   wtD_.assign(static_cast<std::size_t>(Index(outC_) * k_ * k_ * ldwD_), 0.0f);
                 });
  FEDSILO_ASSERT(chunk_ * std::max(in_.perSample(), grad_.perSample()) < (Index(1) << 31), "conv2d: plane too large");
  // Gather tables: positions of the chunk, taps of the kernel.
  fillGatherTables(in_, chunk_, k_, oh_, ow_, stride_, stride_);
  fillGatherTables(grad_, chunk_, k_, h_, w_, 1, 1);
}

void ConvDirect::packWeights(const float* w) {
  // wt_[k][c] = w[c][k]: the weight as the GEMM's K x outC right-hand side, channels contiguous.
  kernels::active().conv.planesToRows(w, nullptr, 1, outC_, kdim_, 0, wt_.data(), ldw_);
}

void ConvDirect::packFlippedWeights(const float* w) {
  // wtD_[(co, kh, kw)][ci] = w[co][ci][k-1-kh][k-1-kw]
  const int kk = k_ * k_;
  for (int co = 0; co < outC_; ++co)
    for (int t = 0; t < kk; ++t) {
      float* row = wtD_.data() + (Index(co) * kk + t) * ldwD_;
      const float* src = w + Index(co) * inC_ * kk + (kk - 1 - t);  // flipped tap: (k-1-kh)*k + (k-1-kw)
      for (int ci = 0; ci < inC_; ++ci) row[ci] = src[Index(ci) * kk];
    }
}

void ConvDirect::padInput(const float* x, int b0, int nb) {
  const Index plane = Index(in_.rows) * in_.cols;
  for (int b = 0; b < nb; ++b)
    for (int c = 0; c < inC_; ++c) {
      const float* src = x + (b0 + b) * inSize_ + Index(c) * h_ * w_;
      float* dst = in_.data.data() + b * in_.perSample() + c * plane + Index(pad_) * in_.cols + pad_;
      for (int r = 0; r < h_; ++r) std::memcpy(dst + Index(r) * in_.cols, src + Index(r) * w_, sizeof(float) * w_);
    }
}

void ConvDirect::padGradient(const float* y, const float* dy, int b0, int nb, bool relu) {
  const int off = k_ - 1 - pad_;
  const Index plane = Index(grad_.rows) * grad_.cols;
  for (int b = 0; b < nb; ++b)
    for (int c = 0; c < outC_; ++c) {
      const Index src0 = (b0 + b) * outSize_ + c * ohw_;
      float* dst = grad_.data.data() + b * grad_.perSample() + c * plane;
      for (int r = 0; r < oh_; ++r) {
        const float* g = dy + src0 + Index(r) * ow_;
        const float* a = y + src0 + Index(r) * ow_;
        float* d = dst + Index(off + r * stride_) * grad_.cols + off;
        if (relu) {
          for (int j = 0; j < ow_; ++j) d[j * stride_] = a[j] > 0.0f ? g[j] : 0.0f;
        } else {
          for (int j = 0; j < ow_; ++j) d[j * stride_] = g[j];
        }
      }
    }
}

void ConvDirect::biasGradient(const float* y, const float* dy, float* db, int batch, bool relu) const {
  std::fill(db, db + outC_, 0.0f);
  for (int b = 0; b < batch; ++b)
    for (int c = 0; c < outC_; ++c) {
      const Index off = b * outSize_ + c * ohw_;
      float s = 0.0f;
      if (relu) {
        for (Index p = 0; p < ohw_; ++p) s += y[off + p] > 0.0f ? dy[off + p] : 0.0f;
      } else {
        for (Index p = 0; p < ohw_; ++p) s += dy[off + p];
      }
      db[c] += s;
    }
}

void ConvDirect::forward(const float* w, const float* bias, const float* x, float* y, int batch, bool relu) {
  FEDSILO_ASSERT(batch <= maxBatch_, "conv2d: batch ", batch, " exceeds reserved ", maxBatch_);
  if (bf16_) return bf16_->forward(w, bias, x, y, batch, relu);
  const kernels::ConvKernels& kc = kernels::active().conv;
  packWeights(w);
  for (int b0 = 0; b0 < batch; b0 += chunk_) {
    const int nb = std::min(chunk_, batch - b0);
    padInput(x, b0, nb);
    kc.gemm(in_.data.data(), in_.rowBase.data(), nb * ohw_, in_.tap.data(), static_cast<int>(kdim_), wt_.data(), ldw_,
            outC_, z_.data(), ldw_);
    kc.rowsToPlanes(z_.data(), ldw_, bias, relu, nb, outC_, ohw_, y + b0 * outSize_, outSize_);
  }
}

void ConvDirect::backward(const float* w, float* dw, float* db, const float* x, const float* y, const float* dy,
                          float* dx, int batch, bool relu) {
  FEDSILO_ASSERT(batch <= maxBatch_, "conv2d: batch ", batch, " exceeds reserved ", maxBatch_);
  if (bf16_) return bf16_->backward(w, dw, db, x, y, dy, dx, batch, relu);
  biasGradient(y, dy, db, batch, relu);
  const kernels::ConvKernels& kc = kernels::active().conv;
  if (dx) packFlippedWeights(w);
  const Index hw = Index(h_) * w_;
  for (int b0 = 0; b0 < batch; b0 += chunk_) {
    const int nb = std::min(chunk_, batch - b0);
    padInput(x, b0, nb);
    kc.planesToRows(dy + b0 * outSize_, relu ? y + b0 * outSize_ : nullptr, nb, outC_, ohw_, outSize_, z_.data(),
                    ldw_);
    kc.wgrad(in_.data.data(), in_.rowBase.data(), nb * ohw_, in_.tap.data(), static_cast<int>(kdim_), z_.data(), ldw_,
             outC_, dwt_.data(), ldw_, b0 > 0);
    if (!dx) continue;
    padGradient(y, dy, b0, nb, relu);
    kc.gemm(grad_.data.data(), grad_.rowBase.data(), nb * hw, grad_.tap.data(), outC_ * k_ * k_, wtD_.data(), ldwD_,
            inC_, zD_.data(), ldwD_);
    kc.rowsToPlanes(zD_.data(), ldwD_, nullptr, false, nb, inC_, hw, dx + b0 * inSize_, inSize_);
  }
  // dw[c][k] = dwt_[k][c]
  kc.rowsToPlanes(dwt_.data(), ldw_, nullptr, false, 1, outC_, kdim_, dw, 0);
}

}  // namespace fedsilo
