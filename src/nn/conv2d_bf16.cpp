#include "nn/conv2d_bf16.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "nn/bf16.hpp"
#include "nn/bf16_kernels.hpp"
#include "nn/conv_gather.hpp"
#include "nn/kernel_table.hpp"
#include "nn/pool_fusion.hpp"

namespace fedsilo {

ConvBf16::ConvBf16(const ConvGeometry& g) : g_(g), owPairs_((g.ow + 1) / 2), tapPairs_(g.inC == 1) {
  fwd_ = {(g.inC + 1) / 2, g.h + 2 * g.pad, g.w + 2 * g.pad, {}, {}, {}};
  shift_ = {g.inC, g.h + 2 * g.pad, g.w + 2 * g.pad, {}, {}, {}};
  grad_ = {(g.outC + 1) / 2, g.h + g.k - 1, g.w + g.k - 1, {}, {}, {}};
}

void ConvBf16::reserve(int chunk) {
  FEDSILO_ASSERT(chunk > 0);
  if (chunk <= chunk_) return;
  chunk_ = chunk;
  const Index hw = Index(g_.h) * g_.w, kk = Index(g_.k) * g_.k;
  const Index words =
      chunk * (fwd_.perSample() + shift_.perSample() + grad_.perSample() + Index(g_.oh) * owPairs_ * g_.ldw) +
      kk * (fwd_.channels * g_.ldw + grad_.channels * g_.ldwD);
  const Index pooled = pooledSize(g_.outC, g_.oh, g_.ow);
  const Index floats = chunk * (g_.ohw * g_.ldw + hw * g_.ldwD + pooled + g_.outSize) + g_.kdim * g_.ldw + g_.ow;
  allocateOrFail(
      fmt("the bf16 conv2d ", g_.inC, "x", g_.h, "x", g_.w, " -> ", g_.outC, " workspace for ", chunk, " samples"),
      static_cast<std::uint64_t>((words + floats) * 4), [&] {
        for (Plane* p : {&fwd_, &shift_, &grad_}) p->data.assign(static_cast<std::size_t>(chunk * p->perSample()), 0u);
        dzPairs_.assign(static_cast<std::size_t>(chunk * Index(g_.oh) * owPairs_ * g_.ldw), 0u);
        wt_.assign(static_cast<std::size_t>(kk * fwd_.channels * g_.ldw), 0u);
        wtD_.assign(static_cast<std::size_t>(kk * grad_.channels * g_.ldwD), 0u);
        z_.assign(static_cast<std::size_t>(chunk * g_.ohw * g_.ldw), 0.0f);
        zD_.assign(static_cast<std::size_t>(chunk * hw * g_.ldwD), 0.0f);
        dwt_.assign(static_cast<std::size_t>(g_.kdim * g_.ldw), 0.0f);
        rowBuf_.assign(static_cast<std::size_t>(g_.ow), 0.0f);
        pooledDz_.assign(static_cast<std::size_t>(chunk * pooled), 0.0f);
        dz_.assign(static_cast<std::size_t>(chunk * g_.outSize), 0.0f);
      });
  FEDSILO_ASSERT(chunk * std::max({fwd_.perSample(), shift_.perSample(), grad_.perSample()}) < (Index(1) << 31),
                 "conv2d: plane too large");
  buildTables();
}

void ConvBf16::buildTables() {
  // the shifted plane's positions are column pairs: 2 * stride apart
  fillGatherTables(fwd_, chunk_, g_.k, g_.oh, g_.ow, g_.stride, g_.stride);
  if (tapPairs_) {  // (kh, kw pair q): taps kw = 2q and 2q + 1 in one word
    fwd_.tap.clear();
    for (int kh = 0; kh < g_.k; ++kh)
      for (int q = 0; q < (g_.k + 1) / 2; ++q) fwd_.tap.push_back(static_cast<std::int32_t>(kh * fwd_.cols + 2 * q));
  }
  fillGatherTables(shift_, chunk_, g_.k, g_.oh, owPairs_, g_.stride, 2 * g_.stride);
  fillGatherTables(grad_, chunk_, g_.k, g_.h, g_.w, 1, 1);
}

void ConvBf16::packWeights(const float* w) {
  // wt_[(p, kh, kw)][co] = (w[co][2p][kh][kw], w[co][2p + 1][kh][kw]); one channel:
  // wt_[(kh, q)][co] = (w[co][0][kh][2q], w[co][0][kh][2q + 1])
  const Index kk = Index(g_.k) * g_.k;
  if (tapPairs_) {
    const int pairs = (g_.k + 1) / 2;
    for (int kh = 0; kh < g_.k; ++kh)
      for (int q = 0; q < pairs; ++q) {
        std::uint32_t* row = wt_.data() + (Index(kh) * pairs + q) * g_.ldw;
        const bool has1 = 2 * q + 1 < g_.k;
        for (int co = 0; co < g_.outC; ++co) {
          const float* wc = w + co * g_.kdim + Index(kh) * g_.k + 2 * q;
          row[co] = bf16Pair(wc[0], has1 ? wc[1] : 0.0f);
        }
      }
    return;
  }
  for (int p = 0; p < fwd_.channels; ++p)
    for (Index t = 0; t < kk; ++t) {
      std::uint32_t* row = wt_.data() + (p * kk + t) * g_.ldw;
      const int c1 = 2 * p + 1;
      for (int co = 0; co < g_.outC; ++co) {
        const float* wc = w + co * g_.kdim + t;
        row[co] = bf16Pair(wc[2 * p * kk], c1 < g_.inC ? wc[c1 * kk] : 0.0f);
      }
    }
}

void ConvBf16::packFlippedWeights(const float* w) {
  // wtD_[(p, kh, kw)][ci] = (w[2p][ci][k-1-kh][k-1-kw], w[2p + 1][ci][k-1-kh][k-1-kw])
  const Index kk = Index(g_.k) * g_.k;
  for (int p = 0; p < grad_.channels; ++p)
    for (Index t = 0; t < kk; ++t) {
      std::uint32_t* row = wtD_.data() + (p * kk + t) * g_.ldwD;
      const int c0 = 2 * p, c1 = 2 * p + 1;
      for (int ci = 0; ci < g_.inC; ++ci) {
        const Index off = ci * kk + (kk - 1 - t);
        row[ci] = bf16Pair(w[c0 * g_.kdim + off], c1 < g_.outC ? w[c1 * g_.kdim + off] : 0.0f);
      }
    }
}

void ConvBf16::padInputPairs(const float* x, int b0, int nb) {
  if (tapPairs_) return padInputShifted(x, b0, nb, fwd_, 1);
  const auto pairRows = kernels::bf16ConvKernels().pairRows;
  const Index plane = Index(fwd_.rows) * fwd_.cols, hw = Index(g_.h) * g_.w;
  for (int b = 0; b < nb; ++b)
    for (int p = 0; p < fwd_.channels; ++p) {
      const float* s0 = x + (b0 + b) * g_.inSize + 2 * p * hw;
      const bool has1 = 2 * p + 1 < g_.inC;
      std::uint32_t* dst = fwd_.data.data() + b * fwd_.perSample() + p * plane + Index(g_.pad) * fwd_.cols + g_.pad;
      for (int r = 0; r < g_.h; ++r) {
        const float* a = s0 + Index(r) * g_.w;
        pairRows(a, nullptr, has1 ? a + hw : nullptr, nullptr, g_.w, dst + Index(r) * fwd_.cols);
      }
    }
}

void ConvBf16::padInputShifted(const float* x, int b0, int nb, Plane& plane, int shift) {
  // word (ch, r, c) = (xpad[ch][r][c], xpad[ch][r][c + shift]); the rows of the top and bottom padding stay 0
  const auto pairShiftedRows = kernels::bf16ConvKernels().pairShiftedRows;
  const Index planeSize = Index(plane.rows) * plane.cols, hw = Index(g_.h) * g_.w;
  for (int b = 0; b < nb; ++b)
    for (int ch = 0; ch < g_.inC; ++ch) {
      std::uint32_t* dst = plane.data.data() + b * plane.perSample() + ch * planeSize + Index(g_.pad) * plane.cols;
      pairShiftedRows(x + (b0 + b) * g_.inSize + ch * hw, g_.h, g_.w, g_.pad, shift, plane.cols, dst);
    }
}

void ConvBf16::padGradientPairs(const float* y, const float* dy, int nb, bool relu) {
  // stride 1: straight into the plane; a larger stride dilates: through rowBuf_, then one word in `stride`
  const auto pairRows = kernels::bf16ConvKernels().pairRows;
  const int off = g_.k - 1 - g_.pad;
  const Index plane = Index(grad_.rows) * grad_.cols;
  std::uint32_t* packed = g_.stride == 1 ? nullptr : reinterpret_cast<std::uint32_t*>(rowBuf_.data());
  for (int b = 0; b < nb; ++b)
    for (int p = 0; p < grad_.channels; ++p) {
      const Index s0 = b * g_.outSize + 2 * p * g_.ohw;
      const bool has1 = 2 * p + 1 < g_.outC;
      std::uint32_t* dst = grad_.data.data() + b * grad_.perSample() + p * plane;
      for (int r = 0; r < g_.oh; ++r) {
        std::uint32_t* d = dst + Index(off + r * g_.stride) * grad_.cols + off;
        const Index o = s0 + Index(r) * g_.ow;
        pairRows(dy + o, relu ? y + o : nullptr, has1 ? dy + o + g_.ohw : nullptr,
                 relu && has1 ? y + o + g_.ohw : nullptr, g_.ow, packed ? packed : d);
        if (packed)
          for (int j = 0; j < g_.ow; ++j) d[j * g_.stride] = packed[j];
      }
    }
}

void ConvBf16::pairGradientRows(const float* y, const float* dy, float* db, int b0, int nb, bool relu) {
  // dzPairs_[(b, r, j)][c] = (dZ (b, r, 2j), dZ (b, r, 2j + 1)) with zeros beyond the last column; the bias
  // gradient sums dZ, in order, per channel. An even row pairs within itself, so the pairs are the planes'
  // consecutive positions: one pass (planesToPairs). An odd row goes through rows of channels (fp32, in z_).
  if (b0 == 0) std::fill(db, db + g_.outC, 0.0f);
  const float* mask = relu ? y : nullptr;
  if (g_.ow % 2 == 0)
    return kernels::bf16ConvKernels().planesToPairs(dy, mask, nb, g_.outC, g_.ohw, g_.outSize, dzPairs_.data(), g_.ldw,
                                                    db);
  const auto pairRows = kernels::bf16ConvKernels().pairRows;
  kernels::active().conv.planesToRows(dy, mask, nb, g_.outC, g_.ohw, g_.outSize, z_.data(), g_.ldw);
  for (Index i = 0; i < nb * g_.ohw; ++i) {
    const float* zi = z_.data() + i * g_.ldw;
    for (int c = 0; c < g_.outC; ++c) db[c] += zi[c];
  }
  for (int b = 0; b < nb; ++b)
    for (int r = 0; r < g_.oh; ++r)
      for (int j = 0; j < owPairs_; ++j) {
        const float* z0 = z_.data() + ((b * g_.ohw) + Index(r) * g_.ow + 2 * j) * g_.ldw;
        pairRows(z0, nullptr, 2 * j + 1 < g_.ow ? z0 + g_.ldw : nullptr, nullptr, g_.outC,
                 dzPairs_.data() + ((Index(b) * g_.oh + r) * owPairs_ + j) * g_.ldw);
      }
}

void ConvBf16::forward(const float* w, const float* bias, const float* x, float* y, int batch, bool relu) {
  forwardImpl(w, bias, x, y, batch, relu, nullptr);
}

void ConvBf16::forwardPooled(const float* w, const float* bias, const float* x, float* yPool, std::uint8_t* pos,
                             int batch) {
  const PooledOutput pooled{yPool, pos};
  forwardImpl(w, bias, x, nullptr, batch, true, &pooled);
}

// forward into y, or with `pooled` each chunk's ReLU output (in dz_) pooled into it.
void ConvBf16::forwardImpl(const float* w, const float* bias, const float* x, float* y, int batch, bool relu,
                           const PooledOutput* pooled) {
  const kernels::Bf16ConvKernels& kb = kernels::bf16ConvKernels();
  const kernels::ConvKernels& kc = kernels::active().conv;
  packWeights(w);
  const int kPairs = static_cast<int>(fwd_.tap.size());
  for (int b0 = 0; b0 < batch; b0 += chunk_) {
    const int nb = std::min(chunk_, batch - b0);
    padInputPairs(x, b0, nb);
    kb.gemm(fwd_.data.data(), fwd_.rowBase.data(), nb * g_.ohw, fwd_.tap.data(), kPairs, wt_.data(), g_.ldw, g_.outC,
            z_.data(), g_.ldw);
    float* out = pooled ? dz_.data() : y + b0 * g_.outSize;
    kc.rowsToPlanes(z_.data(), g_.ldw, bias, relu, nb, g_.outC, g_.ohw, out, g_.outSize, nullptr);
    if (pooled) poolChunk(out, b0, nb, g_.outC, g_.oh, g_.ow, *pooled);
  }
}

void ConvBf16::backward(const float* w, float* dw, float* db, const float* x, const float* y, const float* dy,
                        float* dx, int batch, bool relu) {
  backwardImpl(w, dw, db, x, y, dy, dx, batch, relu, nullptr);
}

void ConvBf16::backwardPooled(const float* w, float* dw, float* db, const float* x, const float* yPool,
                              const float* dyPool, const std::uint8_t* pos, float* dx, int batch) {
  const PooledGradient pooled{yPool, dyPool, pos};
  backwardImpl(w, dw, db, x, nullptr, nullptr, dx, batch, false, &pooled);
}

void ConvBf16::backwardImpl(const float* w, float* dw, float* db, const float* x, const float* y, const float* dy,
                            float* dx, int batch, bool relu, const PooledGradient* pooled) {
  const kernels::Bf16ConvKernels& kb = kernels::bf16ConvKernels();
  const kernels::ConvKernels& kc = kernels::active().conv;
  if (dx) packFlippedWeights(w);
  const Index hw = Index(g_.h) * g_.w;
  const int gradPairs = grad_.channels * g_.k * g_.k;
  for (int b0 = 0; b0 < batch; b0 += chunk_) {
    const int nb = std::min(chunk_, batch - b0);
    if (pooled) expandPooledChunk(*pooled, b0, nb, g_.outC, g_.oh, g_.ow, pooledDz_.data(), dz_.data());
    const float* yc = pooled ? nullptr : y + b0 * g_.outSize;
    const float* dyc = pooled ? dz_.data() : dy + b0 * g_.outSize;
    padInputShifted(x, b0, nb, shift_, g_.stride);
    pairGradientRows(yc, dyc, db, b0, nb, relu);
    kb.wgrad(shift_.data.data(), shift_.rowBase.data(), Index(nb) * g_.oh * owPairs_, shift_.tap.data(),
             static_cast<int>(g_.kdim), dzPairs_.data(), g_.ldw, g_.outC, dwt_.data(), g_.ldw, b0 > 0);
    if (!dx) continue;
    padGradientPairs(yc, dyc, nb, relu);
    kb.gemm(grad_.data.data(), grad_.rowBase.data(), nb * hw, grad_.tap.data(), gradPairs, wtD_.data(), g_.ldwD, g_.inC,
            zD_.data(), g_.ldwD);
    kc.rowsToPlanes(zD_.data(), g_.ldwD, nullptr, false, nb, g_.inC, hw, dx + b0 * g_.inSize, g_.inSize, nullptr);
  }
  kc.rowsToPlanes(dwt_.data(), g_.ldw, nullptr, false, 1, g_.outC, g_.kdim, dw, 0, nullptr);
}

}  // namespace fedsilo
