#include "nn/conv2d_bf16.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "nn/bf16.hpp"
#include "nn/bf16_kernels.hpp"
#include "nn/conv_gather.hpp"
#include "nn/kernel_table.hpp"

namespace fedsilo {

namespace {

int roundUp16(int n) { return (n + 15) / 16 * 16; }

}  // namespace

ConvBf16::ConvBf16(int inC, int h, int w, int outC, int k, int stride, int pad)
    : inC_(inC), h_(h), w_(w), outC_(outC), k_(k), stride_(stride), pad_(pad), tapPairs_(inC == 1) {
  oh_ = (h + 2 * pad - k) / stride + 1;
  ow_ = (w + 2 * pad - k) / stride + 1;
  owPairs_ = (ow_ + 1) / 2;
  ohw_ = static_cast<Index>(oh_) * ow_;
  kdim_ = static_cast<Index>(inC) * k * k;
  inSize_ = static_cast<Index>(inC) * h * w;
  outSize_ = static_cast<Index>(outC) * ohw_;
  ldw_ = roundUp16(outC);
  ldwD_ = roundUp16(inC);
  fwd_ = {(inC + 1) / 2, h + 2 * pad, w + 2 * pad, {}, {}, {}};
  shift_ = {inC, h + 2 * pad, w + 2 * pad, {}, {}, {}};
  grad_ = {(outC + 1) / 2, h + k - 1, w + k - 1, {}, {}, {}};
}

void ConvBf16::reserve(int chunk) {
  FEDSILO_ASSERT(chunk > 0);
  if (chunk <= chunk_) return;
  chunk_ = chunk;
  const Index hw = Index(h_) * w_, kk = Index(k_) * k_;
  const Index words = chunk * (fwd_.perSample() + shift_.perSample() + grad_.perSample() + Index(oh_) * owPairs_ * ldw_) +
                      kk * (fwd_.channels * ldw_ + grad_.channels * ldwD_);
  const Index floats = chunk * (ohw_ * ldw_ + hw * ldwD_) + kdim_ * ldw_ + shift_.cols + stride_ + ow_;
  allocateOrFail(fmt("the bf16 conv2d ", inC_, "x", h_, "x", w_, " -> ", outC_, " workspace for ", chunk, " samples"),
                 static_cast<std::uint64_t>((words + floats) * 4), [&] {
                   for (Plane* p : {&fwd_, &shift_, &grad_})
                     p->data.assign(static_cast<std::size_t>(chunk * p->perSample()), 0u);
                   dzPairs_.assign(static_cast<std::size_t>(chunk * Index(oh_) * owPairs_ * ldw_), 0u);
                   wt_.assign(static_cast<std::size_t>(kk * fwd_.channels * ldw_), 0u);
                   wtD_.assign(static_cast<std::size_t>(kk * grad_.channels * ldwD_), 0u);
                   z_.assign(static_cast<std::size_t>(chunk * ohw_ * ldw_), 0.0f);
                   zD_.assign(static_cast<std::size_t>(chunk * hw * ldwD_), 0.0f);
                   dwt_.assign(static_cast<std::size_t>(kdim_ * ldw_), 0.0f);
                   rowBuf_.assign(static_cast<std::size_t>(std::max(shift_.cols + stride_, ow_)), 0.0f);
                 });
  FEDSILO_ASSERT(chunk * std::max({fwd_.perSample(), shift_.perSample(), grad_.perSample()}) < (Index(1) << 31),
                 "conv2d: plane too large");
  buildTables();
}

void ConvBf16::buildTables() {
  // the shifted plane's positions are column pairs: 2 * stride apart
  fillGatherTables(fwd_, chunk_, k_, oh_, ow_, stride_, stride_);
  if (tapPairs_) {  // (kh, kw pair q): taps kw = 2q and 2q + 1 in one word
    fwd_.tap.clear();
    for (int kh = 0; kh < k_; ++kh)
      for (int q = 0; q < (k_ + 1) / 2; ++q) fwd_.tap.push_back(static_cast<std::int32_t>(kh * fwd_.cols + 2 * q));
  }
  fillGatherTables(shift_, chunk_, k_, oh_, owPairs_, stride_, 2 * stride_);
  fillGatherTables(grad_, chunk_, k_, h_, w_, 1, 1);
}

void ConvBf16::packWeights(const float* w) {
  // wt_[(p, kh, kw)][co] = (w[co][2p][kh][kw], w[co][2p + 1][kh][kw]); one channel:
  // wt_[(kh, q)][co] = (w[co][0][kh][2q], w[co][0][kh][2q + 1])
  const Index kk = Index(k_) * k_;
  if (tapPairs_) {
    const int pairs = (k_ + 1) / 2;
    for (int kh = 0; kh < k_; ++kh)
      for (int q = 0; q < pairs; ++q) {
        std::uint32_t* row = wt_.data() + (Index(kh) * pairs + q) * ldw_;
        const bool has1 = 2 * q + 1 < k_;
        for (int co = 0; co < outC_; ++co) {
          const float* wc = w + co * kdim_ + Index(kh) * k_ + 2 * q;
          row[co] = bf16Pair(wc[0], has1 ? wc[1] : 0.0f);
        }
      }
    return;
  }
  for (int p = 0; p < fwd_.channels; ++p)
    for (Index t = 0; t < kk; ++t) {
      std::uint32_t* row = wt_.data() + (p * kk + t) * ldw_;
      const int c1 = 2 * p + 1;
      for (int co = 0; co < outC_; ++co) {
        const float* wc = w + co * kdim_ + t;
        row[co] = bf16Pair(wc[2 * p * kk], c1 < inC_ ? wc[c1 * kk] : 0.0f);
      }
    }
}

void ConvBf16::packFlippedWeights(const float* w) {
  // wtD_[(p, kh, kw)][ci] = (w[2p][ci][k-1-kh][k-1-kw], w[2p + 1][ci][k-1-kh][k-1-kw])
  const Index kk = Index(k_) * k_;
  for (int p = 0; p < grad_.channels; ++p)
    for (Index t = 0; t < kk; ++t) {
      std::uint32_t* row = wtD_.data() + (p * kk + t) * ldwD_;
      const int c0 = 2 * p, c1 = 2 * p + 1;
      for (int ci = 0; ci < inC_; ++ci) {
        const Index off = ci * kk + (kk - 1 - t);
        row[ci] = bf16Pair(w[c0 * kdim_ + off], c1 < outC_ ? w[c1 * kdim_ + off] : 0.0f);
      }
    }
}

void ConvBf16::padInputPairs(const float* x, int b0, int nb) {
  if (tapPairs_) return padInputShifted(x, b0, nb, fwd_, 1);
  const auto pairRows = kernels::bf16ConvKernels().pairRows;
  const Index plane = Index(fwd_.rows) * fwd_.cols, hw = Index(h_) * w_;
  for (int b = 0; b < nb; ++b)
    for (int p = 0; p < fwd_.channels; ++p) {
      const float* s0 = x + (b0 + b) * inSize_ + 2 * p * hw;
      const bool has1 = 2 * p + 1 < inC_;
      std::uint32_t* dst = fwd_.data.data() + b * fwd_.perSample() + p * plane + Index(pad_) * fwd_.cols + pad_;
      for (int r = 0; r < h_; ++r) {
        const float* a = s0 + Index(r) * w_;
        pairRows(a, nullptr, has1 ? a + hw : nullptr, nullptr, w_, dst + Index(r) * fwd_.cols);
      }
    }
}

void ConvBf16::padInputShifted(const float* x, int b0, int nb, Plane& plane, int shift) {
  // word (ch, r, c) = (xpad[ch][r][c], xpad[ch][r][c + shift]) through one zero-bordered fp32 row;
  // the rows of the top and bottom padding stay 0 (shift <= stride: rowBuf_ holds cols + stride)
  const auto pairRows = kernels::bf16ConvKernels().pairRows;
  const Index planeSize = Index(plane.rows) * plane.cols, hw = Index(h_) * w_;
  float* row = rowBuf_.data();
  std::fill(rowBuf_.begin(), rowBuf_.end(), 0.0f);  // the border (padGradientPairs also uses the buffer)
  for (int b = 0; b < nb; ++b)
    for (int ch = 0; ch < inC_; ++ch) {
      const float* src = x + (b0 + b) * inSize_ + ch * hw;
      std::uint32_t* dst = plane.data.data() + b * plane.perSample() + ch * planeSize + Index(pad_) * plane.cols;
      for (int r = 0; r < h_; ++r) {
        std::copy(src + Index(r) * w_, src + Index(r + 1) * w_, row + pad_);
        pairRows(row, nullptr, row + shift, nullptr, plane.cols, dst + Index(r) * plane.cols);
      }
    }
}

void ConvBf16::padGradientPairs(const float* y, const float* dy, int b0, int nb, bool relu) {
  // stride 1: straight into the plane; a larger stride dilates: through rowBuf_, then one word in `stride`
  const auto pairRows = kernels::bf16ConvKernels().pairRows;
  const int off = k_ - 1 - pad_;
  const Index plane = Index(grad_.rows) * grad_.cols;
  std::uint32_t* packed = stride_ == 1 ? nullptr : reinterpret_cast<std::uint32_t*>(rowBuf_.data());
  for (int b = 0; b < nb; ++b)
    for (int p = 0; p < grad_.channels; ++p) {
      const Index s0 = (b0 + b) * outSize_ + 2 * p * ohw_;
      const bool has1 = 2 * p + 1 < outC_;
      std::uint32_t* dst = grad_.data.data() + b * grad_.perSample() + p * plane;
      for (int r = 0; r < oh_; ++r) {
        std::uint32_t* d = dst + Index(off + r * stride_) * grad_.cols + off;
        const Index o = s0 + Index(r) * ow_;
        pairRows(dy + o, relu ? y + o : nullptr, has1 ? dy + o + ohw_ : nullptr, relu && has1 ? y + o + ohw_ : nullptr,
                 ow_, packed ? packed : d);
        if (packed)
          for (int j = 0; j < ow_; ++j) d[j * stride_] = packed[j];
      }
    }
}

void ConvBf16::pairGradientRows(const float* y, const float* dy, float* db, int b0, int nb, bool relu) {
  // dZ as rows of channels (fp32, in z_), then dzPairs_[(b, r, j)][c] = (row (b, r, 2j), row (b, r, 2j + 1))
  // with zeros beyond the last column; the bias gradient sums the rows, in order, per channel
  const auto pairRows = kernels::bf16ConvKernels().pairRows;
  kernels::active().conv.planesToRows(dy + b0 * outSize_, relu ? y + b0 * outSize_ : nullptr, nb, outC_, ohw_,
                                      outSize_, z_.data(), ldw_);
  if (b0 == 0) std::fill(db, db + outC_, 0.0f);
  for (Index i = 0; i < nb * ohw_; ++i) {
    const float* zi = z_.data() + i * ldw_;
    for (int c = 0; c < outC_; ++c) db[c] += zi[c];
  }
  for (int b = 0; b < nb; ++b)
    for (int r = 0; r < oh_; ++r)
      for (int j = 0; j < owPairs_; ++j) {
        const float* z0 = z_.data() + ((b * ohw_) + Index(r) * ow_ + 2 * j) * ldw_;
        pairRows(z0, nullptr, 2 * j + 1 < ow_ ? z0 + ldw_ : nullptr, nullptr, outC_,
                 dzPairs_.data() + ((Index(b) * oh_ + r) * owPairs_ + j) * ldw_);
      }
}

void ConvBf16::forward(const float* w, const float* bias, const float* x, float* y, int batch, bool relu) {
  const kernels::Bf16ConvKernels& kb = kernels::bf16ConvKernels();
  const kernels::ConvKernels& kc = kernels::active().conv;
  packWeights(w);
  const int kPairs = static_cast<int>(fwd_.tap.size());
  for (int b0 = 0; b0 < batch; b0 += chunk_) {
    const int nb = std::min(chunk_, batch - b0);
    padInputPairs(x, b0, nb);
    kb.gemm(fwd_.data.data(), fwd_.rowBase.data(), nb * ohw_, fwd_.tap.data(), kPairs, wt_.data(), ldw_, outC_,
            z_.data(), ldw_);
    kc.rowsToPlanes(z_.data(), ldw_, bias, relu, nb, outC_, ohw_, y + b0 * outSize_, outSize_);
  }
}

void ConvBf16::backward(const float* w, float* dw, float* db, const float* x, const float* y, const float* dy, float* dx,
                        int batch, bool relu) {
  const kernels::Bf16ConvKernels& kb = kernels::bf16ConvKernels();
  const kernels::ConvKernels& kc = kernels::active().conv;
  if (dx) packFlippedWeights(w);
  const Index hw = Index(h_) * w_;
  const int gradPairs = grad_.channels * k_ * k_;
  for (int b0 = 0; b0 < batch; b0 += chunk_) {
    const int nb = std::min(chunk_, batch - b0);
    padInputShifted(x, b0, nb, shift_, stride_);
    pairGradientRows(y, dy, db, b0, nb, relu);
    kb.wgrad(shift_.data.data(), shift_.rowBase.data(), Index(nb) * oh_ * owPairs_, shift_.tap.data(),
             static_cast<int>(kdim_), dzPairs_.data(), ldw_, outC_, dwt_.data(), ldw_, b0 > 0);
    if (!dx) continue;
    padGradientPairs(y, dy, b0, nb, relu);
    kb.gemm(grad_.data.data(), grad_.rowBase.data(), nb * hw, grad_.tap.data(), gradPairs, wtD_.data(), ldwD_, inC_,
            zD_.data(), ldwD_);
    kc.rowsToPlanes(zD_.data(), ldwD_, nullptr, false, nb, inC_, hw, dx + b0 * inSize_, inSize_);
  }
  kc.rowsToPlanes(dwt_.data(), ldw_, nullptr, false, 1, outC_, kdim_, dw, 0);
}

}  // namespace fedsilo
