#include "nn/conv2d_direct.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "nn/bf16.hpp"
#include "nn/conv_gather.hpp"
#include "nn/kernel_table.hpp"
#include "nn/pool_fusion.hpp"

namespace fedsilo {

namespace {

// Bytes of the per-chunk buffers: they are reused by the three products of a chunk, and measured fastest
// when they stay in a core's L2 (docs/performance.md).
constexpr Index kChunkBytes = Index(768) << 10;

// The row stride of a packed operand of `channels` floats per row: whole 64-byte lines, and an odd
// number of them when a row is wider than the kernels' tile (4 vectors, 4 lines). The tiles read a
// 4-line slice of every row down a block of rows; at a stride of 8 or 16 lines those slices fall into
// a quarter or half of the L1 cache's 64 sets, and the block is read from L2 instead (measured:
// docs/performance.md, "The fp32 convolution tile").
int rowStride(int channels) {
  const int lines = (channels + 15) / 16;
  return 16 * (lines > 4 && lines % 2 == 0 ? lines + 1 : lines);
}

// The fewest taps (inC k k) for which the GEMMs get the kernel-row spans.
constexpr Index kMinSpanTaps = 64;

// The kernel taps [lo, hi) along one axis of a k-tap kernel that read inside the image, for an output
// whose window starts at plane cell `at`, the image holding cells [first, first + count); empty: [k, 0).
std::pair<int, int> insideSpan(int k, int at, int first, int count) {
  const int lo = std::clamp(first - at, 0, k), hi = std::clamp(first + count - at, 0, k);
  return lo < hi ? std::make_pair(lo, hi) : std::make_pair(k, 0);
}

// span[4i..4i + 3] = the kernel rows [lo, hi) and columns [lo, hi) of a k x k kernel that position i reads
// inside the image, for one sample's positions (output row r, column c) whose patch starts at plane row
// r * step and column c * step, over a plane whose rows and columns [first, first + rows / cols) hold the
// image (the rest is zero padding); a position that reads only padding gets empty spans.
std::vector<std::uint8_t> sampleSpans(int k, int outRows, int outCols, int step, int first, int rows, int cols) {
  FEDSILO_ASSERT(k < 256, "conv2d: kernel side ", k, " beyond the span tables' bytes");
  std::vector<std::uint8_t> span;
  for (int r = 0; r < outRows; ++r)
    for (int c = 0; c < outCols; ++c) {
      auto rs = insideSpan(k, r * step, first, rows), cs = insideSpan(k, c * step, first, cols);
      if (rs.first >= rs.second || cs.first >= cs.second) rs = cs = {k, 0};
      for (int v : {rs.first, rs.second, cs.first, cs.second}) span.push_back(static_cast<std::uint8_t>(v));
    }
  return span;
}

}  // namespace

// The GEMM's tiles take consecutive rows, and a tile leaves out only the taps that all its positions read in
// the padding; so each sample's positions are put in the order of their spans (the border columns together,
// then the border rows), and a tile of the border reads only the kernel rows and columns it needs: 28% of the
// multiply-adds of cnn_playerfl_cifar's conv5 (11 x 11 images padded by 2) and 17% of conv4's are zero padding.
// The order changes no output: every output element is the same chain over the taps.
void ConvDirect::orderBySpans(Plane& p, int chunk, int k, int outRows, int outCols, int step, int first, int rows,
                              int cols) {
  const std::vector<std::uint8_t> one = sampleSpans(k, outRows, outCols, step, first, rows, cols);
  const int P = outRows * outCols;
  std::vector<std::int32_t> order(static_cast<std::size_t>(P));
  for (int i = 0; i < P; ++i) order[i] = i;
  const auto key = [&](int i) {
    const std::uint8_t* s = one.data() + 4 * i;
    return std::make_tuple(s[2], s[3], s[0], s[1]);
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  p.span.clear();
  p.gemmBase.clear();
  p.rowOf.assign(static_cast<std::size_t>(P), 0);
  for (int j = 0; j < P; ++j) p.rowOf[order[j]] = j;
  for (int b = 0; b < chunk; ++b)
    for (int j = 0; j < P; ++j) {
      p.gemmBase.push_back(p.rowBase[static_cast<std::size_t>(b) * P + order[j]]);
      p.span.insert(p.span.end(), one.begin() + 4 * order[j], one.begin() + 4 * order[j] + 4);
    }
}

ConvDirect::ConvDirect(const ConvGeometry& g) : g_(g), ldw_(rowStride(g.outC)), ldwD_(rowStride(g.inC)) {
  FEDSILO_ASSERT(g.pad <= g.k - 1, "conv2d: the direct path needs pad <= k - 1");
  in_.channels = g.inC;
  in_.rows = g.h + 2 * g.pad;
  in_.cols = g.w + 2 * g.pad;
  // dL/dx is the stride-1 convolution of dZ (dilated by the stride) padded by k - 1 - pad.
  grad_.channels = g.outC;
  grad_.rows = g.h + g.k - 1;
  grad_.cols = g.w + g.k - 1;
  if (bf16Active()) bf16_ = std::make_unique<ConvBf16>(g);
}

void ConvDirect::reserve(int maxBatch) {
  FEDSILO_ASSERT(maxBatch > 0);
  if (maxBatch <= maxBatch_) return;
  maxBatch_ = maxBatch;
  const Index hw = static_cast<Index>(g_.h) * g_.w;
  const Index perSample = (in_.perSample() + g_.ohw * ldw_ + grad_.perSample() + hw * ldwD_) * Index(sizeof(float));
  chunk_ = static_cast<int>(std::clamp<Index>(kChunkBytes / perSample, 1, maxBatch));
  if (bf16_) {  // the fp32 buffers stay empty
    bf16_->reserve(chunk_);
    return;
  }
  const Index weights = 2 * g_.kdim * ldw_ + Index(g_.outC) * g_.k * g_.k * ldwD_;
  allocateOrFail(
      fmt("the conv2d ", g_.inC, "x", g_.h, "x", g_.w, " -> ", g_.outC, " workspace for ", chunk_, " samples"),
      static_cast<std::uint64_t>(chunk_ * perSample + weights * Index(sizeof(float))), [&] {
        in_.data.assign(static_cast<std::size_t>(chunk_ * in_.perSample()), 0.0f);
        grad_.data.assign(static_cast<std::size_t>(chunk_ * grad_.perSample()), 0.0f);
        z_.assign(static_cast<std::size_t>(chunk_ * g_.ohw * ldw_), 0.0f);
        zD_.assign(static_cast<std::size_t>(chunk_ * hw * ldwD_), 0.0f);
        wt_.assign(static_cast<std::size_t>(g_.kdim * ldw_), 0.0f);
        dwt_.assign(static_cast<std::size_t>(g_.kdim * ldw_), 0.0f);
        wtD_.assign(static_cast<std::size_t>(Index(g_.outC) * g_.k * g_.k * ldwD_), 0.0f);
        biasSum_.assign(static_cast<std::size_t>(g_.outC), 0.0f);
      });
  FEDSILO_ASSERT(chunk_ * std::max(in_.perSample(), grad_.perSample()) < (Index(1) << 31), "conv2d: plane too large");
  // Gather tables: positions of the chunk, taps of the kernel.
  fillGatherTables(in_, chunk_, g_.k, g_.oh, g_.ow, g_.stride, g_.stride);
  fillGatherTables(grad_, chunk_, g_.k, g_.h, g_.w, 1, 1);
  // Spans only where a tile's taps are many: over conv1's 25 (one input channel) working out a tile's span
  // cost more than the padding rows it leaves out (W2's conv1 forward 0.85x with spans).
  if (g_.kdim >= kMinSpanTaps) {
    orderBySpans(in_, chunk_, g_.k, g_.oh, g_.ow, g_.stride, g_.pad, g_.h, g_.w);
    if (g_.pad > 0) orderTapsByWindow();
  }
  // dZ's rows and columns in grad_: k - 1 - pad, then every stride-th (dilated) up to (oh - 1) * stride further.
  if (Index(g_.outC) * g_.k * g_.k >= kMinSpanTaps)
    orderBySpans(grad_, chunk_, g_.k, g_.h, g_.w, 1, g_.k - 1 - g_.pad, (g_.oh - 1) * g_.stride + 1,
                 (g_.ow - 1) * g_.stride + 1);
}

// The weight gradient multiplies each tap's column of the im2col matrix with dL/dz over all positions; a
// tap (channel, kh, kw) reads the image only at a window of output positions (the rest is zero padding), so
// with taps in the order (kh, kw, channel) a tile of taps shares one window and skips the rest: as many
// products as the forward leaves out (orderBySpans). The order of the sum over the positions is kept, so
// the bits are those of the full product; only the rows of dwt_ move, and rowsToPlanes maps them back.
void ConvDirect::orderTapsByWindow() {
  const int kk = g_.k * g_.k;
  const auto window = [&](int kOff, int size, int outSize, std::int16_t* out) {
    // output o reads plane cell o * stride + kOff, inside the image for cells [pad, pad + size)
    int lo = 0;
    while (lo < outSize && lo * g_.stride + kOff < g_.pad) ++lo;
    int hi = lo;
    while (hi < outSize && hi * g_.stride + kOff < g_.pad + size) ++hi;
    out[0] = static_cast<std::int16_t>(lo), out[1] = static_cast<std::int16_t>(hi);
  };
  FEDSILO_ASSERT(g_.oh < (1 << 15) && g_.ow < (1 << 15), "conv2d: output beyond the window tables");
  in_.wgradTap.clear();
  in_.rect.clear();
  in_.tapRowOf.assign(static_cast<std::size_t>(g_.kdim), 0);
  for (int t = 0; t < kk; ++t)
    for (int ci = 0; ci < g_.inC; ++ci) {
      const int k = ci * kk + t;
      in_.tapRowOf[k] = static_cast<std::int32_t>(in_.wgradTap.size());
      in_.wgradTap.push_back(in_.tap[k]);
      std::int16_t r[4];
      window(t / g_.k, g_.h, g_.oh, r);
      window(t % g_.k, g_.w, g_.ow, r + 2);
      in_.rect.insert(in_.rect.end(), r, r + 4);
    }
  windows_ = kernels::TapWindows{in_.rect.data(), g_.oh, g_.ow};
}

void ConvDirect::packWeights(const float* w) {
  // wt_[k][c] = w[c][k]: the weight as the GEMM's K x outC right-hand side, channels contiguous.
  kernels::active().conv.planesToRows(w, nullptr, 1, g_.outC, g_.kdim, 0, wt_.data(), ldw_);
}

void ConvDirect::packFlippedWeights(const float* w) {
  // wtD_[(co, kh, kw)][ci] = w[co][ci][k-1-kh][k-1-kw]
  const int kk = g_.k * g_.k;
  for (int co = 0; co < g_.outC; ++co)
    for (int t = 0; t < kk; ++t) {
      float* row = wtD_.data() + (Index(co) * kk + t) * ldwD_;
      const float* src = w + Index(co) * g_.inC * kk + (kk - 1 - t);  // flipped tap: (k-1-kh)*k + (k-1-kw)
      for (int ci = 0; ci < g_.inC; ++ci) row[ci] = src[Index(ci) * kk];
    }
}

void ConvDirect::padInput(const float* x, int b0, int nb) {
  const Index plane = Index(in_.rows) * in_.cols;
  const kernels::ConvKernels& kc = kernels::active().conv;
  for (int b = 0; b < nb; ++b)
    kc.copyIntoPadded(x + (b0 + b) * g_.inSize, nullptr, g_.inC, g_.h, g_.w,
                      in_.data.data() + b * in_.perSample() + Index(g_.pad) * in_.cols + g_.pad, plane, in_.cols);
}

void ConvDirect::padGradient(const float* y, const float* dy, int nb, bool relu) {
  const int off = g_.k - 1 - g_.pad;
  const Index plane = Index(grad_.rows) * grad_.cols;
  if (g_.stride == 1) {  // rows stay contiguous: the kernel set's masked-vector copy
    const kernels::ConvKernels& kc = kernels::active().conv;
    for (int b = 0; b < nb; ++b) {
      const Index src0 = b * g_.outSize;
      kc.copyIntoPadded(dy + src0, relu ? y + src0 : nullptr, g_.outC, g_.oh, g_.ow,
                        grad_.data.data() + b * grad_.perSample() + Index(off) * grad_.cols + off, plane, grad_.cols);
    }
    return;
  }
  for (int b = 0; b < nb; ++b)  // dilated by the stride
    for (int c = 0; c < g_.outC; ++c) {
      const Index src0 = b * g_.outSize + c * g_.ohw;
      float* dst = grad_.data.data() + b * grad_.perSample() + c * plane;
      for (int r = 0; r < g_.oh; ++r) {
        const float* g = dy + src0 + Index(r) * g_.ow;
        float* d = dst + Index(off + r * g_.stride) * grad_.cols + off;
        if (relu) {
          const float* a = y + src0 + Index(r) * g_.ow;
          for (int j = 0; j < g_.ow; ++j) d[j * g_.stride] = a[j] > 0.0f ? g[j] : 0.0f;
        } else {
          for (int j = 0; j < g_.ow; ++j) d[j * g_.stride] = g[j];
        }
      }
    }
}

// db[c] += the sum over the positions of each sample, in order, of dZ[i][c]: the rows planesToRows
// made for the weight gradient (dL/dy masked by the ReLU), while they are in cache. Summed across
// channels at once, the additions of different channels are independent vector lanes; a pass over
// one channel's plane at a time waits for each addition in turn (4.5% of a W2 training step in perf).
// Each sum is still one chain per sample and channel, added to db sample by sample: the same bits.
void ConvDirect::addBiasGradient(int nb, float* db) {
  float* sum = biasSum_.data();
  for (int b = 0; b < nb; ++b) {
    std::fill(sum, sum + g_.outC, 0.0f);
    for (Index p = 0; p < g_.ohw; ++p) {
      const float* row = z_.data() + (b * g_.ohw + p) * ldw_;
      for (int c = 0; c < g_.outC; ++c) sum[c] += row[c];
    }
    for (int c = 0; c < g_.outC; ++c) db[c] += sum[c];
  }
}

void ConvDirect::reservePooled() {
  FEDSILO_ASSERT(maxBatch_ > 0, "conv2d: reservePooled before reserve");
  if (bf16_) return;  // ConvBf16::reserve holds its own
  const Index masked = chunk_ * pooledSize(g_.outC, g_.oh, g_.ow), dz = chunk_ * g_.outSize;
  if (static_cast<Index>(dzChunk_.size()) >= dz) return;
  allocateOrFail(
      fmt("the conv2d ", g_.inC, "x", g_.h, "x", g_.w, " -> ", g_.outC, " pooling workspace for ", chunk_, " samples"),
      bytesOf<float>(static_cast<std::uint64_t>(masked + dz)), [&] {
        pooledDz_.assign(static_cast<std::size_t>(masked), 0.0f);
        dzChunk_.assign(static_cast<std::size_t>(dz), 0.0f);
      });
}

void ConvDirect::forward(const float* w, const float* bias, const float* x, float* y, int batch, bool relu) {
  FEDSILO_ASSERT(batch <= maxBatch_, "conv2d: batch ", batch, " exceeds reserved ", maxBatch_);
  if (bf16_) return bf16_->forward(w, bias, x, y, batch, relu);
  forwardImpl(w, bias, x, y, batch, relu, nullptr);
}

// The fused passes are forward(relu = true) and backward(relu = true) chunk by chunk, except where the
// ReLU's output and dL/dz live: a chunk's output planes are pooled while in cache (and never stored),
// and a chunk's dL/dz is rebuilt in cache from the pool's output, gradient and window positions
// (nn/pool_fusion.hpp) instead of read back from a dense dL/dy the pool wrote and the ReLU's output.
// The values reaching the GEMM kernels, the bias sums and the pool are the same, so are the results.
void ConvDirect::forwardPooled(const float* w, const float* bias, const float* x, float* yPool, std::uint8_t* pos,
                               int batch) {
  FEDSILO_ASSERT(batch <= maxBatch_, "conv2d: batch ", batch, " exceeds reserved ", maxBatch_);
  if (bf16_) return bf16_->forwardPooled(w, bias, x, yPool, pos, batch);
  const PooledOutput pooled{yPool, pos};
  forwardImpl(w, bias, x, nullptr, batch, true, &pooled);
}

// forward into y, or with `pooled` each chunk's ReLU output (in dzChunk_) pooled into it.
void ConvDirect::forwardImpl(const float* w, const float* bias, const float* x, float* y, int batch, bool relu,
                             const PooledOutput* pooled) {
  const kernels::ConvKernels& kc = kernels::active().conv;
  packWeights(w);
  for (int b0 = 0; b0 < batch; b0 += chunk_) {
    const int nb = std::min(chunk_, batch - b0);
    padInput(x, b0, nb);
    kc.gemm(in_.data.data(), in_.gemmRows(), nb * g_.ohw, in_.tap.data(), static_cast<int>(g_.kdim), wt_.data(), ldw_,
            g_.outC, z_.data(), ldw_, in_.spans(), g_.k);
    float* out = pooled ? dzChunk_.data() : y + b0 * g_.outSize;
    kc.rowsToPlanes(z_.data(), ldw_, bias, relu, nb, g_.outC, g_.ohw, out, g_.outSize, in_.rowOrder());
    if (pooled) poolChunk(out, b0, nb, g_.outC, g_.oh, g_.ow, *pooled);
  }
}

void ConvDirect::backward(const float* w, float* dw, float* db, const float* x, const float* y, const float* dy,
                          float* dx, int batch, bool relu) {
  FEDSILO_ASSERT(batch <= maxBatch_, "conv2d: batch ", batch, " exceeds reserved ", maxBatch_);
  if (bf16_) return bf16_->backward(w, dw, db, x, y, dy, dx, batch, relu);
  backwardImpl(w, dw, db, x, y, dy, dx, batch, relu, nullptr);
}

void ConvDirect::backwardPooled(const float* w, float* dw, float* db, const float* x, const float* yPool,
                                const float* dyPool, const std::uint8_t* pos, float* dx, int batch) {
  FEDSILO_ASSERT(batch <= maxBatch_, "conv2d: batch ", batch, " exceeds reserved ", maxBatch_);
  if (bf16_) return bf16_->backwardPooled(w, dw, db, x, yPool, dyPool, pos, dx, batch);
  const PooledGradient pooled{yPool, dyPool, pos};
  backwardImpl(w, dw, db, x, nullptr, nullptr, dx, batch, false, &pooled);
}

// From dL/dy and y, or with `pooled` from each chunk's dL/dz rebuilt into dzChunk_ (already ReLU-masked).
void ConvDirect::backwardPerExample(const float* w, const float* x, const float* dz, float* dx, int batch,
                                    double* norms2) {
  FEDSILO_ASSERT(batch <= maxBatch_, "conv2d: batch ", batch, " exceeds reserved ", maxBatch_);
  FEDSILO_ASSERT(!bf16_, "conv2d: per-example norms on the bf16 kernels");
  backwardImpl(w, nullptr, biasSum_.data(), x, nullptr, dz, dx, batch, false, nullptr, norms2);
}

void ConvDirect::addPerExampleNorms(int nb, double* norms2) {
  const kernels::ConvKernels& kc = kernels::active().conv;
  const Index T = g_.ohw;
  for (int s = 0; s < nb; ++s) {
    const float* zs = z_.data() + s * T * ldw_;  // the sample's rows: its positions, channels at stride ldw_
    kc.wgrad(in_.data.data(), in_.rowBase.data() + s * T, T, in_.tap.data(), static_cast<int>(g_.kdim), zs, ldw_,
             g_.outC, dwt_.data(), ldw_, false, nullptr);
    double sum = 0.0;
    for (Index k = 0; k < g_.kdim; ++k) {
      float row = 0.0f;
      for (int c = 0; c < g_.outC; ++c) row += dwt_[k * ldw_ + c] * dwt_[k * ldw_ + c];
      sum += row;
    }
    for (int c = 0; c < g_.outC; ++c) {
      float bias = 0.0f;
      for (Index p = 0; p < T; ++p) bias += zs[p * ldw_ + c];
      sum += static_cast<double>(bias) * bias;
    }
    norms2[s] += sum;
  }
}

void ConvDirect::backwardImpl(const float* w, float* dw, float* db, const float* x, const float* y, const float* dy,
                              float* dx, int batch, bool relu, const PooledGradient* pooled, double* norms2) {
  std::fill(db, db + g_.outC, 0.0f);
  const kernels::ConvKernels& kc = kernels::active().conv;
  if (dx) packFlippedWeights(w);
  const Index hw = Index(g_.h) * g_.w;
  for (int b0 = 0; b0 < batch; b0 += chunk_) {
    const int nb = std::min(chunk_, batch - b0);
    if (pooled) expandPooledChunk(*pooled, b0, nb, g_.outC, g_.oh, g_.ow, pooledDz_.data(), dzChunk_.data());
    const float* yc = relu ? y + b0 * g_.outSize : nullptr;
    const float* dyc = pooled ? dzChunk_.data() : dy + b0 * g_.outSize;
    padInput(x, b0, nb);
    kc.planesToRows(dyc, yc, nb, g_.outC, g_.ohw, g_.outSize, z_.data(), ldw_);
    if (norms2) {
      addPerExampleNorms(nb, norms2 + b0);
    } else {
      addBiasGradient(nb, db);
      const bool win = !in_.wgradTap.empty();
      kc.wgrad(in_.data.data(), in_.rowBase.data(), nb * g_.ohw, win ? in_.wgradTap.data() : in_.tap.data(),
               static_cast<int>(g_.kdim), z_.data(), ldw_, g_.outC, dwt_.data(), ldw_, b0 > 0,
               win ? &windows_ : nullptr);
    }
    if (!dx) continue;
    padGradient(yc, dyc, nb, relu);
    kc.gemm(grad_.data.data(), grad_.gemmRows(), nb * hw, grad_.tap.data(), g_.outC * g_.k * g_.k, wtD_.data(), ldwD_,
            g_.inC, zD_.data(), ldwD_, grad_.spans(), g_.k);
    kc.rowsToPlanes(zD_.data(), ldwD_, nullptr, false, nb, g_.inC, hw, dx + b0 * g_.inSize, g_.inSize,
                    grad_.rowOrder());
  }
  if (norms2) return;
  // dw[c][k] = dwt_[k][c]
  kc.rowsToPlanes(dwt_.data(), ldw_, nullptr, false, 1, g_.outC, g_.kdim, dw, 0,
                  in_.tapRowOf.empty() ? nullptr : in_.tapRowOf.data());
}

}  // namespace fedsilo
