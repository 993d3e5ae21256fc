// 2-D convolution (cross-correlation, as PyTorch's nn.Conv2d).
//
// float (the default build) runs ConvDirect (nn/conv2d_direct.*): a gather GEMM over the zero-padded
// input, vectorised along channels, with the ReLU that follows fused in (ReluFusableT). Builds with
// -DFEDSILO_ONEDNN=ON run the shapes where oneDNN measured faster on it instead (nn/onednn_conv.hpp). The rest of
// this comment describes the im2col path that double (the gradient tests' reference),
// FEDSILO_GEMM=openblas builds and convolutions padded by more than k - 1 run.
//
// Layout: a sample's input column is C x H x W contiguous (row index (c*H + h)*W + w), the same
// order as PyTorch's flatten, and so is its output (outC x outH x outW). Parameters: weight in
// PyTorch order [outC][inC][k][k], then bias[outC]; fanIn = inC*k*k.
//
// Implementation: the im2col matrix is built transposed, P = (N x K) column-major with
// N = batch*outH*outW rows (sample-major) and K = inC*k*k columns. Each column of P is then a
// shifted copy of one input plane, so im2col reads and writes contiguously. The weight, stored
// [outC][K] row-major, is a K x outC column-major matrix Wt, and one GEMM Z = P * Wt gives the
// (N x outC) output, which a block copy (adding the bias) reorders into the per-sample C x H x W
// columns. Backward: dW^T = P^T dZ (K x outC, written straight into the row-major weight
// gradient), dP = dZ * W, then col2im scatter-adds dP into dx.
//
// The batch is processed in chunks whose P fits kChunkElems values: the buffers stay cache-sized
// and evaluation batches of 1000 do not need gigabytes of im2col. Backward redoes the im2col of
// every chunk except the last one forward left in the buffer (a copy, cheap next to the GEMMs).
#pragma once
#include <memory>

#include "nn/conv_geometry.hpp"
#include "nn/gemm.hpp"
#include "nn/layer.hpp"
#include "nn/per_example.hpp"
#include "nn/relu_fusable.hpp"

namespace fedsilo {

class ConvDirect;
class OnednnConv;

template <typename T>
class Conv2DT : public LayerT<T>, public ReluFusableT<T>, public PoolFusableT<T> {
 public:
  // Default upper bound on the im2col chunk (values; 2 MiB of float, about one core's L2 here); a
  // chunk holds at least one sample. Measured on the W2 conv2 (32->64, 14x14, batch 32):
  // fwd+bwd 19-20 ms CPU with 3-sample chunks vs 25 ms with the whole batch in one P (20 MiB),
  // because P, dP and Z then stay in cache between im2col, the GEMMs and col2im.
  static constexpr Index kChunkElems = Index(1) << 19;

  Conv2DT(int inC, int h, int w, int outC, int k, int stride = 1, int pad = 0);
  ~Conv2DT() override;
  std::string kind() const override { return "conv2d"; }
  Shape outputShape() const override { return Shape{g_.outC, g_.oh, g_.ow}; }
  // Every output value is a dot product of inC k k weights with its (zero-padded) window, plus the bias;
  // the weight and input gradients are the same products transposed (the im2col GEMMs' count).
  FlopCount flopsPerSample() const override {
    const double outputs = static_cast<double>(g_.outSize), mac = 2.0 * outputs * static_cast<double>(g_.kdim);
    return {mac + outputs, mac + outputs, mac};
  }
  std::vector<ParamSpec> paramSpecs() const override;
  void bind(T* params, T* grads) override;
  void reserve(int maxBatch) override;
  void forward(const CMapT<T>& x, MapT<T>& y, bool training) override;
  void backward(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) override;
  // Per sample: its T = oh ow patches (im2col of that sample alone) and dz give ||G_i||^2 by the
  // cheaper of materialising G_i and the ghost norm (nn/per_example.hpp), plus the bias's ||sum_t dz_t||^2;
  // dx from the ordinary backward.
  bool backwardPerExample(const CMapT<T>& x, const CMapT<T>& dz, MapT<T>* dx, double* norms2) override;
  // How backwardPerExample forms the norms of this layer (perExampleMethod of its shape).
  PerExampleMethod perExampleNormMethod() const;
  void forwardRelu(const CMapT<T>& x, MapT<T>& y) override;
  void backwardRelu(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) override;
  // On the direct path (float without oneDNN: ConvDirect::forwardPooled, backwardPooled, both precisions).
  bool poolFusable() const override;
  void forwardReluPool(const CMapT<T>& x, MapT<T>& yPool, std::uint8_t* pos) override;
  void backwardReluPool(const CMapT<T>& x, const T* yPool, const T* dyPool, const std::uint8_t* pos,
                        MapT<T>* dx) override;

  int inChannels() const { return g_.inC; }
  int outChannels() const { return g_.outC; }
  int kernel() const { return g_.k; }
  // Samples per im2col chunk for a batch of `batch` (chunks are balanced; the im2col path).
  int chunkSamples(int batch) const;
  // Overrides kChunkElems (tests use it to exercise several chunks on small shapes). Call before
  // reserve().
  void setMaxChunkElems(Index elems);

 private:
  void forwardAct(const CMapT<T>& x, MapT<T>& y, bool relu);
  void backwardIm2col(const CMapT<T>& x, const CMapT<T>& dy, MapT<T>* dx);
  bool backwardFast(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx, bool relu);
  void im2col(const T* x, int b0, int nb);           // x: the whole batch; fills cols_ for samples [b0, b0+nb)
  void col2im(T* dx, int b0, int nb);                // scatter-adds cols_ (as dP) into dx columns [b0, b0+nb)
  void samplePatches(const T* x, T* p) const;        // one sample's im2col, p: ohw x kdim column-major

  const ConvGeometry g_;
  T* wt_ = nullptr;
  T* b_ = nullptr;
  T* dwt_ = nullptr;
  T* db_ = nullptr;
  Index chunkElems_ = kChunkElems;
  int maxBatch_ = 0, maxChunk_ = 0;
  AlignedVector<T> cols_;  // P (or dP) for one chunk: (nb*ohw) x kdim
  AlignedVector<T> z_;     // Z (or dZ) for one chunk: (nb*ohw) x outC
  AlignedVector<T> dz_;    // backwardRelu on the im2col path: dL/d(pre-activation), outSize x batch
  AlignedVector<T> patches_;  // backwardPerExample: one sample's im2col (ohw x kdim)
  std::unique_ptr<ConvDirect> direct_;  // the float path (null: im2col)
#ifdef FEDSILO_ONEDNN
  std::unique_ptr<OnednnConv> onednn_;  // the float path where oneDNN was measured faster (nn/onednn_conv.hpp)
#endif
  // Which chunk P currently holds (first sample, count); -1 when overwritten by dP.
  int cachedB0_ = -1, cachedNb_ = 0;
  const T* cachedX_ = nullptr;
  GemmWorkspace<T> gemmFwd_, gemmWgrad_, gemmDgrad_;
};

using Conv2D = Conv2DT<float>;

}  // namespace fedsilo
