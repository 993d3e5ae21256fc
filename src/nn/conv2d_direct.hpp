// Conv2DT<float>'s convolution without an im2col matrix (internal to src/nn; used unless the build
// routes products through BLAS, FEDSILO_GEMM=openblas).
//
// The input of a chunk of samples is copied into a zero-padded buffer (C x (H + 2 pad) x (W + 2 pad)
// per sample; the border is zeroed once and never written), and the kernel set's gather GEMM
// (nn/kernel_table.hpp) reads the im2col matrix P[i][k] = xpad[rowBase[i] + tap[k]] through two offset
// tables: i = (sample, output row, output column), k = (input channel, kh, kw). All three products run
// on it, vectorised along channels:
//   forward       Z[i][c]  = sum_k P[i][k] Wt[k][c]                 -> bias (+ ReLU) -> y (C x H x W)
//   weight grad   dWt[k][c] = sum_i P[i][k] dZ[i][c]                -> dW = dWt^T (PyTorch order)
//   input grad    a convolution of the zero-padded (for stride > 1 also dilated) dZ with the flipped,
//                 channel-transposed kernel W'[ci][co][kh][kw] = W[co][ci][k-1-kh][k-1-kw]: the same
//                 forward gather GEMM, no col2im scatter.
// Every output element is one chain of fused multiply-adds in a fixed order (forward over the taps k,
// the weight gradient over the batch's positions in order, the input gradient over (co, kh, kw)), so
// results do not depend on the chunking, the tile grid or the kernel set. The forward and input-gradient
// GEMMs leave out the taps of kernel rows and columns that a whole tile reads in the zero padding (+-0
// products, which leave such a chain's bits unchanged for finite operands), with each sample's positions
// ordered so that a tile holds positions of the same border. The forward chain is the same as the im2col +
// GEMM formulation's, the backward chains differ from it (docs/performance.md).
#pragma once
#include <cstdint>

#include <memory>

#include "core/types.hpp"
#include "nn/conv2d_bf16.hpp"
#include "nn/conv_geometry.hpp"
#include "nn/kernel_table.hpp"

namespace fedsilo {

// The fused passes' batch-wide pool buffers (nn/pool_fusion.hpp).
struct PooledOutput;
struct PooledGradient;

class ConvDirect {
 public:
  explicit ConvDirect(const ConvGeometry& g);

  // Buffers for batches up to maxBatch (chunks of at most chunkSamples()).
  void reserve(int maxBatch);
  // y = act(conv(x, w) + bias) for `batch` samples (x: inC*h*w per sample, y: outC*oh*ow).
  void forward(const float* w, const float* bias, const float* x, float* y, int batch, bool relu);
  // From dL/dy (of the ReLU's output y when relu): dw, db overwritten, dx (if not null) overwritten.
  void backward(const float* w, float* dw, float* db, const float* x, const float* y, const float* dy, float* dx,
                int batch, bool relu);
  int chunkSamples() const { return chunk_; }
  // DP-SGD's norms pass, materialised route (nn/per_example.hpp): norms2[i] += ||dW_i||^2 + ||db_i||^2 of
  // each sample's own weight and bias gradient, each formed by the weight-gradient kernel over that
  // sample's positions alone, and dx (if not null) as backward(); no batch weight gradient.
  void backwardPerExample(const float* w, const float* x, const float* dz, float* dx, int batch, double* norms2);

  // Convolution + ReLU + a 2 x 2, stride-2 max-pool as one pass each way (nn/relu_fusable.hpp:
  // PoolFusableT), bit-identical to forward(relu = true), the pool's
  // forward, and to the pool's backward, backward(relu = true): each chunk's ReLU output is pooled, and
  // its dL/dz rebuilt from the pool's output yPool, dL/dyPool and window positions pos, in cache; the
  // convolution's output is never stored. reservePooled() after reserve().
  void reservePooled();
  void forwardPooled(const float* w, const float* bias, const float* x, float* yPool, std::uint8_t* pos, int batch);
  void backwardPooled(const float* w, float* dw, float* db, const float* x, const float* yPool, const float* dyPool,
                      const std::uint8_t* pos, float* dx, int batch);

 private:
  struct Plane {  // a zero-padded (and possibly dilated) image buffer and the gather tables over it
    int channels = 0, rows = 0, cols = 0;  // per sample: channels x rows x cols
    Index perSample() const { return static_cast<Index>(channels) * rows * cols; }
    AlignedVector<float> data;
    std::vector<std::int32_t> rowBase, tap;  // over the positions in order (sample, output row, column)
    // The GEMM's rows, where they are reordered (empty: the positions in order): gemmBase[j] and span[4j..4j+3]
    // are the offset and kernel spans of the position that row j of a sample's block computes, and rowOf[p]
    // the row of position p; the same per sample.
    std::vector<std::int32_t> gemmBase, rowOf;
    // Per GEMM row: the kernel rows [lo, hi) and columns [lo, hi) that read inside the image (empty: no spans).
    std::vector<std::uint8_t> span;
    // The weight gradient's taps, where they are reordered to (kernel row, kernel column, channel) so that a
    // tile's taps share their window of output positions inside the image (empty: tap, no windows):
    // wgradTap[j] and rect[4j..4j + 3] (output rows [lo, hi), columns [lo, hi)) of its row j, tapRowOf[k]
    // the row of tap k.
    std::vector<std::int32_t> wgradTap, tapRowOf;
    std::vector<std::int16_t> rect;
    const std::int32_t* gemmRows() const { return gemmBase.empty() ? rowBase.data() : gemmBase.data(); }
    const std::int32_t* rowOrder() const { return rowOf.empty() ? nullptr : rowOf.data(); }
    const std::uint8_t* spans() const { return span.empty() ? nullptr : span.data(); }
  };
  // The GEMM rows of a plane's chunk ordered by their kernel spans (gemmBase, rowOf, span; conv2d_direct.cpp).
  static void orderBySpans(Plane& p, int chunk, int k, int outRows, int outCols, int step, int first, int rows,
                           int cols);
  // The weight gradient's tap order and windows over in_ (wgradTap, tapRowOf, rect; conv2d_direct.cpp).
  void orderTapsByWindow();
  void packWeights(const float* w);
  void packFlippedWeights(const float* w);
  void padInput(const float* x, int b0, int nb);
  // The chunk's dL/dy (masked where y <= 0 when relu; y, dy: the chunk's first sample) into grad_.
  void padGradient(const float* y, const float* dy, int nb, bool relu);
  void forwardImpl(const float* w, const float* bias, const float* x, float* y, int batch, bool relu,
                   const PooledOutput* pooled);
  void backwardImpl(const float* w, float* dw, float* db, const float* x, const float* y, const float* dy, float* dx,
                    int batch, bool relu, const PooledGradient* pooled, double* norms2 = nullptr);
  void addPerExampleNorms(int nb, double* norms2);  // the chunk's samples, from in_ and z_ (backwardPerExample)
  void addBiasGradient(int nb, float* db);

  const ConvGeometry g_;
  const int ldw_, ldwD_;  // row strides of the packed operands over outC and inC channels (rowStride)
  int chunk_ = 1, maxBatch_ = 0;
  kernels::TapWindows windows_{};                          // over in_.rect, when it is filled
  Plane in_, grad_;                               // padded input (forward, weight gradient), padded dZ
  AlignedVector<float> wt_, wtD_, dwt_, z_, zD_;  // packed weights, their gradient, GEMM outputs
  AlignedVector<float> biasSum_;                  // one sample's bias gradient (addBiasGradient)
  std::unique_ptr<ConvBf16> bf16_;                // train.precision = bf16 (nn/bf16.hpp): runs the products instead
  AlignedVector<float> pooledDz_, dzChunk_;       // the pooled passes: a chunk's masked dL/dyPool; its dL/dz or ReLU
                                                  // output
};

}  // namespace fedsilo
