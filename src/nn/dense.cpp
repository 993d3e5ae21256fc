#include "nn/dense.hpp"
#include "nn/per_example.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/error.hpp"
#include "core/memory.hpp"

#include "nn/bf16.hpp"
#include "nn/bf16_kernels.hpp"
#include "nn/kernel_table.hpp"

namespace fedsilo {

namespace {
// float runs the hand-written kernels of the active set (nn/kernels.hpp) unless the build routes every
// product through the configured BLAS (FEDSILO_GEMM=openblas: Eigen's products call sgemm, so that the
// two backends can be compared whole, docs/performance.md); double (the gradient tests' reference)
// always uses Eigen.
template <typename T>
constexpr bool kFast =
#ifdef FEDSILO_GEMM_OPENBLAS
    false;
#else
    std::is_same<T, float>::value;
#endif

constexpr int kFwdChunk = 32;  // samples per forward chunk of the kernels (nn/dense_kernels.hpp)

// db[o] = sum over the batch, in order.
template <typename T>
void biasGrad(const T* dz, T* db, int N, int B) {
  std::fill(db, db + N, T(0));
  for (int b = 0; b < B; ++b) {
    const T* d = dz + static_cast<Index>(b) * N;
    for (int o = 0; o < N; ++o) db[o] += d[o];
  }
}

}  // namespace

template <typename T>
DenseT<T>::DenseT(int in, int out) : in_(in), out_(out) {
  FEDSILO_ASSERT(in > 0 && out > 0);
  bf16_ = kFast<T> && bf16Active();
}

template <typename T>
std::vector<ParamSpec> DenseT<T>::paramSpecs() const {
  return {{"weight", static_cast<Index>(in_) * out_, false, in_}, {"bias", out_, true, in_}};
}

template <typename T>
void DenseT<T>::bind(T* params, T* grads) {
  w_ = params;
  b_ = params + static_cast<Index>(in_) * out_;
  dw_ = grads;
  db_ = grads + static_cast<Index>(in_) * out_;
}

template <typename T>
void DenseT<T>::reserve(int maxBatch) {
  const std::size_t need = static_cast<std::size_t>(out_) * static_cast<std::size_t>(std::max(maxBatch, 1));
  if (dz_.size() < need)
    allocateOrFail(fmt("the dense ", in_, " -> ", out_, " workspace for batches of ", maxBatch, " samples"),
                   bytesOf<T>(need), [&] { dz_.assign(need, T(0)); });
  if constexpr (kFast<T>) {
    if (bf16_)
      bf16Scratch(maxBatch);
    else
      scratch();
  }
}

template <typename T>
T* DenseT<T>::scratch() {
  const std::size_t need = static_cast<std::size_t>(in_) * kFwdChunk;
  if (xt_.size() < need) xt_.assign(need, T(0));  // reserve() did it unless skipped
  return xt_.data();
}

template <typename T>
std::uint32_t* DenseT<T>::bf16Scratch(int batch) {
  const auto need = static_cast<std::size_t>(kernels::bf16DenseKernels().scratchWords(in_, out_, std::max(batch, 1)));
  if (bf16Words_.size() < need)  // in reserve(), unless it was skipped
    allocateOrFail(fmt("the bf16 dense ", in_, " -> ", out_, " workspace for batches of ", batch, " samples"),
                   static_cast<std::uint64_t>(need) * 4, [&] { bf16Words_.assign(need, 0u); });
  return bf16Words_.data();
}

template <typename T>
void DenseT<T>::forwardAct(const CMapT<T>& x, MapT<T>& y, bool relu) {
  if constexpr (kFast<T>) {
    const int batch = static_cast<int>(x.cols());
    if (bf16_)
      kernels::bf16DenseKernels().forward(w_, b_, x.data(), y.data(), in_, out_, batch, relu, bf16Scratch(batch));
    else
      kernels::active().dense.forward(w_, b_, x.data(), y.data(), in_, out_, batch, relu, scratch());
    return;
  }
  CMapRMT<T> w(w_, out_, in_);
  Eigen::Map<const VecT<T>> b(b_, out_);
  y.noalias() = w * x;
  y.colwise() += b;
  if (relu) y = y.cwiseMax(T(0));  // exactly ReluT::forward
}

template <typename T>
void DenseT<T>::forward(const CMapT<T>& x, MapT<T>& y, bool) {
  forwardAct(x, y, false);
}

template <typename T>
void DenseT<T>::forwardRelu(const CMapT<T>& x, MapT<T>& y) {
  forwardAct(x, y, true);
}

template <typename T>
void DenseT<T>::backwardFrom(const CMapT<T>& x, const T* dzp, int batch, MapT<T>* dx) {
  if constexpr (kFast<T>) {
    const kernels::DenseKernels& k = kernels::active().dense;
    if (bf16_) {
      const kernels::Bf16DenseKernels& kb = kernels::bf16DenseKernels();
      kb.wgrad(dzp, x.data(), dw_, in_, out_, batch, false, T(0), bf16Scratch(batch));
      if (dx) kb.dgrad(w_, dzp, dx->data(), in_, out_, batch, bf16Scratch(batch));
    } else {
      k.wgrad(dzp, x.data(), dw_, in_, out_, batch);
      if (dx) k.dgrad(w_, dzp, dx->data(), in_, out_, batch);
    }
    biasGrad(dzp, db_, out_, batch);
    return;
  }
  CMapT<T> dy(dzp, out_, batch);
  MapRMT<T> dw(dw_, out_, in_);
  Eigen::Map<VecT<T>> db(db_, out_);
  dw.noalias() = dy * x.transpose();
  db.noalias() = dy.rowwise().sum();
  if (dx) {
    CMapRMT<T> w(w_, out_, in_);
    dx->noalias() = w.transpose() * dy;
  }
}

// dL/dx first (it needs the weights before the step), then the weights updated in the weight-gradient
// kernel, and the bias from its gradient (p - lr * g with one rounding, as Sgd::step in FMA builds).
template <typename T>
void DenseT<T>::sgdFrom(const CMapT<T>& x, const T* dzp, int batch, MapT<T>* dx, T lr) {
  if constexpr (kFast<T>) {
    const kernels::DenseKernels& k = kernels::active().dense;
    if (bf16_) {
      const kernels::Bf16DenseKernels& kb = kernels::bf16DenseKernels();
      if (dx) kb.dgrad(w_, dzp, dx->data(), in_, out_, batch, bf16Scratch(batch));
      kb.wgrad(dzp, x.data(), w_, in_, out_, batch, true, lr, bf16Scratch(batch));
    } else {
      if (dx) k.dgrad(w_, dzp, dx->data(), in_, out_, batch);
      k.wgradSgd(dzp, x.data(), w_, in_, out_, batch, lr);
    }
    biasGrad(dzp, db_, out_, batch);
    for (int o = 0; o < out_; ++o) b_[o] = std::fma(-lr, db_[o], b_[o]);
    return;
  }
  backwardFrom(x, dzp, batch, dx);
  const Index n = static_cast<Index>(in_) * out_ + out_;
  for (Index i = 0; i < n; ++i) w_[i] = std::fma(-lr, dw_[i], w_[i]);  // w_ and b_ are contiguous, as dw_, db_
}

template <typename T>
const T* DenseT<T>::maskedGradient(const CMapT<T>& y, const CMapT<T>& dy) {
  const int batch = static_cast<int>(dy.cols());
  const Index n = static_cast<Index>(out_) * batch;
  if (static_cast<Index>(dz_.size()) < n) reserve(batch);  // only when reserve() was skipped
  if constexpr (kFast<T>) {
    kernels::active().dense.reluMask(y.data(), dy.data(), dz_.data(), n);
  } else {
    MapT<T> dz(dz_.data(), out_, batch);
    dz = (y.array() > T(0)).select(dy, T(0));  // exactly ReluT::backward
  }
  return dz_.data();
}

template <typename T>
void DenseT<T>::backward(const CMapT<T>& x, const CMapT<T>&, const CMapT<T>& dy, MapT<T>* dx) {
  backwardFrom(x, dy.data(), static_cast<int>(dy.cols()), dx);
}

template <typename T>
bool DenseT<T>::backwardPerExample(const CMapT<T>& x, const CMapT<T>& dz, MapT<T>* dx, double* norms2) {
  addDenseGradNormsSquared<T>(x, dz, norms2);
  if (dx) dx->noalias() = CMapRMT<T>(w_, out_, in_).transpose() * dz;
  return true;
}

template <typename T>
void DenseT<T>::backwardRelu(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) {
  backwardFrom(x, maskedGradient(y, dy), static_cast<int>(dy.cols()), dx);
}

template <typename T>
void DenseT<T>::backwardSgd(const CMapT<T>& x, const CMapT<T>* reluY, const CMapT<T>& dy, MapT<T>* dx, T lr) {
  const T* dz = reluY ? maskedGradient(*reluY, dy) : dy.data();
  sgdFrom(x, dz, static_cast<int>(dy.cols()), dx, lr);
}

template <typename T>
void ReluT<T>::forward(const CMapT<T>& x, MapT<T>& y, bool) {
  y = x.cwiseMax(T(0));
}

template <typename T>
void ReluT<T>::backward(const CMapT<T>&, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) {
  if (dx) *dx = (y.array() > T(0)).select(dy, T(0));
}

template class DenseT<float>;
template class DenseT<double>;
template class ReluT<float>;
template class ReluT<double>;

}  // namespace fedsilo
