// Parameterless shape layers: max pooling, global average pooling, flatten.
// Inputs/outputs are per-sample C x H x W columns (PyTorch flatten order).
#pragma once
#include <cstdint>

#include "nn/layer.hpp"

namespace fedsilo {

// Max pooling over k x k windows with the given stride, no padding, floor output size (PyTorch's
// nn.MaxPool2d(k, stride) defaults). Ties go to the first element in row-major window order and a
// NaN wins its window (as PyTorch's CPU kernel). The presets' 2 x 2 windows with stride 2 run the
// kernels of nn/pool_kernels.hpp (the float ones from the active kernel set), which keep the
// winner's position in its window (a byte) and write dx densely; any other window saves the winning
// input index of every output in forward, and backward scatters into a zeroed dx.
template <typename T>
class MaxPool2DT : public LayerT<T> {
 public:
  MaxPool2DT(int c, int h, int w, int k = 2, int stride = 2);
  std::string kind() const override { return "maxpool2d"; }
  Shape outputShape() const override { return Shape{c_, oh_, ow_}; }
  // k^2 - 1 comparisons per output forward; backward routes each output's gradient to its winner.
  FlopCount flopsPerSample() const override {
    const double outputs = static_cast<double>(outSize_);
    return {outputs * (k_ * k_ - 1), 0.0, outputs};
  }
  void reserve(int maxBatch) override;
  void forward(const CMapT<T>& x, MapT<T>& y, bool training) override;
  void backward(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) override;
  // Whether the windows are 2 x 2 with stride 2 over inputs of shape `in` (the kernels of nn/pool_kernels.hpp).
  bool twoByTwoOver(Shape in) const { return twoByTwo_ && in == Shape{c_, h_, w_}; }
  // Then the positions of the maxima, one byte per output of the reserved batch (nn/pool_kernels.hpp), for
  // the fused passes of PoolFusableT, which write and read them in place of this layer; else null.
  std::uint8_t* windowPositions(Shape in) { return twoByTwoOver(in) ? pos_.data() : nullptr; }

 private:
  // One output row (channel c, output row oh) by the plain window loops.
  void poolRowGeneric(const T* in, int c, int oh, T* out, std::int32_t* arg) const;

  int c_, h_, w_, k_, stride_, oh_, ow_;
  Index outSize_;
  int maxBatch_ = 0;
  bool twoByTwo_;                       // k = stride = 2: the kernels of nn/pool_kernels.hpp
  AlignedVector<std::int32_t> argmax_;  // other windows, per output value: the input row (within its sample) that won
  AlignedVector<std::uint8_t> pos_;     // 2 x 2 windows, per output value: the winner's position 0..3
};

// Mean over each channel's H x W plane: C x H x W -> C.
template <typename T>
class GlobalAvgPoolT : public LayerT<T> {
 public:
  GlobalAvgPoolT(int c, int h, int w);
  std::string kind() const override { return "global_avg_pool"; }
  Shape outputShape() const override { return Shape{c_, 1, 1}; }
  // A sum over each plane and one scaling per channel; backward spreads each channel's gradient.
  FlopCount flopsPerSample() const override {
    const double inputs = static_cast<double>(c_) * hw_;
    return {inputs + c_, 0.0, inputs};
  }
  void forward(const CMapT<T>& x, MapT<T>& y, bool training) override;
  void backward(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) override;

 private:
  int c_, hw_;
};

// C x H x W -> (C*H*W) x 1 x 1. The column layout is already the flattened order, so this is a copy;
// it exists so that presets read like the PyTorch models they mirror.
template <typename T>
class FlattenT : public LayerT<T> {
 public:
  explicit FlattenT(Shape in) : in_(in) {}
  std::string kind() const override { return "flatten"; }
  Shape outputShape() const override { return Shape{in_.size(), 1, 1}; }
  FlopCount flopsPerSample() const override { return {}; }  // a copy
  void forward(const CMapT<T>& x, MapT<T>& y, bool training) override;
  void backward(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) override;

 private:
  Shape in_;
};

using MaxPool2D = MaxPool2DT<float>;
using GlobalAvgPool = GlobalAvgPoolT<float>;
using Flatten = FlattenT<float>;

}  // namespace fedsilo
