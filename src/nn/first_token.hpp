// Keeps the first token's column of a token sequence (the [CLS] position read by the PLayer-FL
// authors' text transformer): input seqLen x dim time-major per sample, output its first dim rows.
// No parameters; dx is dy in the first dim rows and 0 elsewhere.
#pragma once
#include "core/error.hpp"
#include "nn/layer.hpp"

namespace fedsilo {

template <typename T>
class FirstTokenT : public LayerT<T> {
 public:
  FirstTokenT(int dim, int seqLen);
  std::string kind() const override { return "first_token"; }
  Shape outputShape() const override { return Shape{dim_, 1, 1}; }
  void forward(const CMapT<T>& x, MapT<T>& y, bool) override {
    FEDSILO_ASSERT(x.rows() == static_cast<Index>(seqLen_) * dim_);
    y = x.topRows(dim_);
  }
  void backward(const CMapT<T>&, const CMapT<T>&, const CMapT<T>& dy, MapT<T>* dx) override {
    if (!dx) return;
    dx->topRows(dim_) = dy;
    dx->bottomRows(dx->rows() - dim_).setZero();
  }

 private:
  int dim_, seqLen_;
};

}  // namespace fedsilo
