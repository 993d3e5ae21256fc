// ConvDirect's bf16 path (train.precision = bf16; internal to src/nn): the same three gather GEMMs as
// nn/conv2d_direct.hpp with bf16 operands paired along each product's reduction and fp32
// accumulation (nn/bf16_kernels.hpp):
//   forward      pairs of input channels:  plane word (p, r, c) = (x[2p][r][c], x[2p+1][r][c]); a single
//                input channel (a first layer) pairs horizontally adjacent taps (kw, kw + 1) instead:
//                plane word (r, c) = (xpad[r][c], xpad[r][c + 1]), k x ceil(k/2) pairs of taps, the
//                tap beyond an odd k with a zero weight
//   input grad   pairs of output channels of the padded (dilated) dZ, with the flipped weights
//   weight grad  pairs of horizontally adjacent output positions (2j, 2j+1) of one output row:
//                plane word (ch, r, c) = (xpad[ch][r][c], xpad[ch][r][c + stride]), dZ paired alike;
//                an odd last column pairs with a zero gradient.
// Any other odd channel count pairs its last channel with a zero one. The weights are packed into bf16
// pairs once per call from the fp32 master weights; the gradients come back in fp32. Every operand is
// rounded to nearest even (nn/bf16.hpp) and every output is one chain in a fixed order.
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.hpp"
#include "nn/conv_geometry.hpp"

namespace fedsilo {

struct PooledOutput;    // nn/pool_fusion.hpp
struct PooledGradient;

class ConvBf16 {
 public:
  explicit ConvBf16(const ConvGeometry& g);
  // Buffers for chunks of `chunk` samples (ConvDirect's chunking).
  void reserve(int chunk);
  // As ConvDirect::forward and ConvDirect::backward (the bias gradient summed per channel over the
  // positions in order, vectorised along the channels: another order than the fp32 path's).
  void forward(const float* w, const float* bias, const float* x, float* y, int batch, bool relu);
  // forward(..., relu = true) followed by a 2 x 2, stride-2 max-pool (nn/pool_kernels.hpp), bit for bit:
  // each chunk's ReLU output is pooled while in cache, into yPool and the window positions pos (outC x
  // (oh / 2) x (ow / 2) per sample); the convolution's own output is not kept (backwardPooled needs none).
  void forwardPooled(const float* w, const float* bias, const float* x, float* yPool, std::uint8_t* pos, int batch);
  void backward(const float* w, float* dw, float* db, const float* x, const float* y, const float* dy, float* dx, int batch,
                bool relu);
  // The same results, bit for bit, as backward(..., relu = true) from the dL/dy that a 2 x 2, stride-2
  // max-pool after the ReLU passes back (nn/pool_kernels.hpp), given that pool's output yPool, dL/dyPool
  // and window positions (outC x (oh / 2) x (ow / 2) per sample), without the convolution's output:
  // each chunk's dL/dz is rebuilt from them in cache (the ReLU's mask is yPool > 0 at the window's
  // winner, 0 elsewhere), instead of the pool writing a dense dL/dy that this pass reads back with the
  // ReLU's output.
  void backwardPooled(const float* w, float* dw, float* db, const float* x, const float* yPool, const float* dyPool,
                      const std::uint8_t* pos, float* dx, int batch);

 private:
  struct Plane {  // a zero-padded plane of bf16 pairs and its gather tables
    int channels = 0, rows = 0, cols = 0;
    Index perSample() const { return static_cast<Index>(channels) * rows * cols; }
    AlignedVector<std::uint32_t> data;
    std::vector<std::int32_t> rowBase, tap;
  };
  void forwardImpl(const float* w, const float* bias, const float* x, float* y, int batch, bool relu,
                   const PooledOutput* pooled);
  void backwardImpl(const float* w, float* dw, float* db, const float* x, const float* y, const float* dy, float* dx,
                    int batch, bool relu, const PooledGradient* pooled);
  void buildTables();
  void packWeights(const float* w);
  void packFlippedWeights(const float* w);
  void padInputPairs(const float* x, int b0, int nb);
  void padInputShifted(const float* x, int b0, int nb, Plane& plane, int shift);
  // y, dy: the chunk's first sample.
  void padGradientPairs(const float* y, const float* dy, int nb, bool relu);
  void pairGradientRows(const float* y, const float* dy, float* db, int b0, int nb, bool relu);

  const ConvGeometry g_;
  int owPairs_;    // output columns in pairs (the weight gradient's reduction)
  bool tapPairs_;  // one input channel: the forward pairs taps (kw, kw + 1), not channels
  int chunk_ = 0;
  Plane fwd_, shift_, grad_;
  AlignedVector<std::uint32_t> wt_, wtD_, dzPairs_;
  AlignedVector<float> z_, zD_, dwt_;  // GEMM outputs (z_ also dZ as rows), the weight gradient
  AlignedVector<float> rowBuf_;       // one row of gradient words before dilation (stride > 1)
  AlignedVector<float> pooledDz_, dz_;  // a chunk's masked dL/dyPool (backwardPooled); its dL/dz, or ReLU output
                                        // (forwardPooled)
};

}  // namespace fedsilo
