// The transformer's position-wise feed-forward block with a residual connection (the PLayer-FL
// authors' fc1 + resid1, code/models.py):
//   y_t = x_t + W_2 relu(W_1 x_t + b_1) + b_2,   W_1: [hidden][d], W_2: [d][hidden]
// applied to every token column (nn/token_columns.hpp); the preset uses hidden = 4 d. Parameters
// (one federation block): w1, b1 (fan-in d), w2, b2 (fan-in hidden); model.init_scheme applies to
// the weights (fan-out hidden, then d). Both products and the weight gradients are GEMMs over all
// T * B tokens, on nn/packed_gemm.hpp.
#pragma once
#include "nn/packed_gemm.hpp"
#include "nn/layer.hpp"

namespace fedsilo {

template <typename T>
class FeedForwardT : public LayerT<T> {
 public:
  FeedForwardT(int dim, int hidden, int seqLen);
  std::string kind() const override { return "feed_forward"; }
  Shape outputShape() const override { return Shape{1, seqLen_, dim_}; }
  std::vector<ParamSpec> paramSpecs() const override;
  void bind(T* params, T* grads) override;
  void reserve(int maxBatch) override;
  void forward(const CMapT<T>& x, MapT<T>& y, bool training) override;
  void backward(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) override;
  // Per sample, W_1 and W_2 as sums over its tokens of outer products (nn/per_example.hpp), each by the
  // cheaper route for T tokens, plus both biases.
  bool backwardPerExample(const CMapT<T>& x, const CMapT<T>& dz, MapT<T>* dx, double* norms2) override;
  int dim() const { return dim_; }
  int hidden() const { return hidden_; }

 private:
  // dh_ = dL/d(W_1 x + b_1) = (W_2^T dY) .* [h > 0] over the batch's TB tokens.
  void hiddenGradient(const CMapT<T>& dy, Index TB);
  // dx = dY (the residual) + W_1^T dh_.
  void inputGradient(const CMapT<T>& dy, Index TB, MapT<T>& dx);

  int dim_, hidden_, seqLen_;
  T* w1_ = nullptr;
  T* b1_ = nullptr;
  T* w2_ = nullptr;
  T* b2_ = nullptr;
  T* dw1_ = nullptr;
  T* db1_ = nullptr;
  T* dw2_ = nullptr;
  T* db2_ = nullptr;
  int maxBatch_ = 0;
  AlignedVector<T> h_;   // hidden x TB: relu(W_1 x + b_1)
  AlignedVector<T> dh_;  // hidden x TB: dL/d(W_1 x + b_1)
  PackedGemm<T> gemmUp_, gemmDown_, gemmDw1_, gemmDw2_, gemmBackH_, gemmDx_;
};

}  // namespace fedsilo
