// Token embedding: a sample's input column holds seqLen token ids (stored as floating point, the
// dataset's feature type); its output column is the seqLen looked-up rows, time-major: step t at
// rows [t*dim, (t+1)*dim). Parameter: weight [vocab][dim] (PyTorch's nn.Embedding order),
// initialised N(0, 1) as PyTorch does. The input is not differentiable: dx, when asked for, is 0.
#pragma once
#include "nn/layer.hpp"

namespace fedsilo {

template <typename T>
class EmbeddingT : public LayerT<T> {
 public:
  EmbeddingT(int vocab, int dim, int seqLen);
  std::string kind() const override { return "embedding"; }
  // 1 x seqLen x dim: the C x H x W reading of the time-major column.
  Shape outputShape() const override { return Shape{1, seqLen_, dim_}; }
  // A lookup forward; backward adds each step's output gradient into its token's row.
  FlopCount flopsPerSample() const override { return {0.0, static_cast<double>(seqLen_) * dim_, 0.0}; }
  std::vector<ParamSpec> paramSpecs() const override;
  void bind(T* params, T* grads) override;
  void initParams(Rng& rng, T* params) const override;
  // Throws DataError for a token id that is not an integer in [0, vocab).
  void forward(const CMapT<T>& x, MapT<T>& y, bool training) override;
  void backward(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) override;
  // Sample i's gradient has one row per distinct token v of its sequence, sum_{t: token t = v} dz_t:
  // norms2[i] += sum_v ||that row||^2 (a sparse per-example gradient, never formed as a table).
  bool backwardPerExample(const CMapT<T>& x, const CMapT<T>& dz, MapT<T>* dx, double* norms2) override;
  int vocab() const { return vocab_; }
  int dim() const { return dim_; }

 private:
  Index tokenAt(const CMapT<T>& x, Index t, Index b) const;

  int vocab_, dim_, seqLen_;
  T* w_ = nullptr;
  T* dw_ = nullptr;
};

using Embedding = EmbeddingT<float>;

}  // namespace fedsilo
