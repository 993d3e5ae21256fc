// Fully connected layer y = W x + b, W stored row-major [out][in] (PyTorch order), then b[out].
//
// float runs the hand-written register-blocked kernels of the active kernel set (nn/kernels.hpp,
// nn/dense_kernels.hpp) instead of Eigen's GEMM: at batch 32 Eigen repacks both operands on every
// call, zero-fills the output and allocates its packing buffers once they exceed 128 KiB (the fc1
// forward of W1, W2's fc1), which together cost about as much as the arithmetic
// (docs/performance.md). Forward transposes each chunk of 32 input columns once and accumulates a
// tile of outputs x samples in registers, then adds the bias (and ReLU) on a transposed store; the
// weight and input gradients read dL/dy, x and W in place. Every output is written exactly once,
// nothing is allocated after reserve(), and every output element is computed by the same sequence of
// operations whatever its position in the batch or in the tile grid, so a sample's result does not
// depend on the batch it is in (except for forward chunks of fewer than 4 samples, which use dot
// products instead of a mostly empty 32-sample tile), nor on buffer addresses, nor on the kernel
// set. double (the gradient tests) and FEDSILO_GEMM=openblas builds use Eigen products.
//
// train.precision = bf16 (nn/bf16.hpp active when the layer is built): the three products, in training
// and in evaluation alike, run the bf16 kernels of nn/bf16_kernels.hpp instead (bf16 operands paired
// along each product's reduction, fp32 accumulation; the weights, the bias and its gradient, and the
// SGD update stay fp32). Every forward chunk then takes the tile path, so no batch-size exception.
#pragma once
#include <cstdint>

#include "nn/layer.hpp"
#include "nn/relu_fusable.hpp"

namespace fedsilo {

template <typename T>
class DenseT : public LayerT<T>, public ReluFusableT<T> {
 public:
  DenseT(int in, int out);
  std::string kind() const override { return "dense"; }
  Shape outputShape() const override { return Shape{out_, 1, 1}; }
  // W x + b, dW = dy x^T with db = sum of dy, dx = W^T dy: one in x out multiply-add each.
  FlopCount flopsPerSample() const override {
    const double mac = 2.0 * in_ * out_;
    return {mac + out_, mac + out_, mac};
  }
  std::vector<ParamSpec> paramSpecs() const override;
  void bind(T* params, T* grads) override;
  void reserve(int maxBatch) override;
  void forward(const CMapT<T>& x, MapT<T>& y, bool training) override;
  void backward(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) override;
  // The ghost norm ||dz_i||^2 (||x_i||^2 + 1) (nn/per_example.hpp) and dx = W^T dz; no weight gradient.
  bool backwardPerExample(const CMapT<T>& x, const CMapT<T>& dz, MapT<T>* dx, double* norms2) override;
  int in() const { return in_; }
  int out() const { return out_; }

  // Dense followed by ReLU in one pass (the Model runs every Dense -> ReLU pair this way):
  // y = max(0, W x + b), written once, and the backward pass from the ReLU's output y and dL/dy.
  // Bit-identical to forward() + ReluT::forward() and to ReluT::backward() + backward(); the
  // pre-activation is never stored. backwardRelu needs reserve(batch) first (no allocation then).
  void forwardRelu(const CMapT<T>& x, MapT<T>& y) override;
  void backwardRelu(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) override;

  // backward() (reluY == nullptr) or backwardRelu() (reluY: the ReLU's output) followed by the plain
  // SGD step W -= lr dW, b -= lr db, with the weights updated inside the weight-gradient kernel: dW
  // is never stored (the gradient buffer's weight slice is left stale; the bias gradient is written).
  // p - lr * g is rounded once, as Sgd::step in builds with FMA. Used by ModelT::sgdStep.
  void backwardSgd(const CMapT<T>& x, const CMapT<T>* reluY, const CMapT<T>& dy, MapT<T>* dx, T lr);

 private:
  void forwardAct(const CMapT<T>& x, MapT<T>& y, bool relu);
  void backwardFrom(const CMapT<T>& x, const T* dz, int batch, MapT<T>* dx);
  void sgdFrom(const CMapT<T>& x, const T* dz, int batch, MapT<T>* dx, T lr);
  const T* maskedGradient(const CMapT<T>& y, const CMapT<T>& dy);  // dz_ = y > 0 ? dy : 0
  T* scratch();  // the forward kernel's transposed input chunk (in x 32)
  std::uint32_t* bf16Scratch(int batch);  // the bf16 kernels' packed operands

  int in_, out_;
  bool bf16_ = false;  // train.precision = bf16: the products run the bf16 kernels
  T* w_ = nullptr;
  T* b_ = nullptr;
  T* dw_ = nullptr;
  T* db_ = nullptr;
  AlignedVector<T> dz_;  // fused backward: dL/d(W x + b), out x maxBatch
  AlignedVector<T> xt_;  // forward: a chunk of 32 samples of x, transposed (float kernels)
  AlignedVector<std::uint32_t> bf16Words_;  // bf16: the operands packed in pairs, for one product at a time
};

// Elementwise max(0, x).
template <typename T>
class ReluT : public LayerT<T> {
 public:
  explicit ReluT(Shape shape) : shape_(shape) {}
  std::string kind() const override { return "relu"; }
  Shape outputShape() const override { return shape_; }
  void forward(const CMapT<T>& x, MapT<T>& y, bool training) override;
  void backward(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) override;

 private:
  Shape shape_;
};

using Dense = DenseT<float>;
using Relu = ReluT<float>;

}  // namespace fedsilo
