// Fully connected layer y = W x + b, W stored row-major [out][in] (PyTorch order), then b[out].
#pragma once
#include "nn/layer.hpp"

namespace fedsilo {

template <typename T>
class DenseT : public LayerT<T> {
 public:
  DenseT(int in, int out);
  std::string kind() const override { return "dense"; }
  Shape outputShape() const override { return Shape{out_, 1, 1}; }
  std::vector<ParamSpec> paramSpecs() const override;
  void bind(T* params, T* grads) override;
  void forward(const CMapT<T>& x, MapT<T>& y, bool training) override;
  void backward(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) override;
  int in() const { return in_; }
  int out() const { return out_; }

 private:
  int in_, out_;
  T* w_ = nullptr;
  T* b_ = nullptr;
  T* dw_ = nullptr;
  T* db_ = nullptr;
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
