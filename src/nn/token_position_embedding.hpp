// The transformer's input layer: token embedding plus learned position embedding,
//   y_t = token[x_t] + position[t],  t = 0 .. seqLen - 1,
// as in GPT-style models and the PLayer-FL authors' text models (token_embedding_table1 +
// position_embedding_table1 of their code/models.py, one federation block here). A sample's input
// column holds seqLen token ids (floats, the dataset's feature type); its output column is seqLen
// rows of width dim, time-major (nn/token_columns.hpp). Parameters: token [vocab][dim] then position
// [maxLen][dim] (only the first seqLen rows are used), every row drawn N(0, 1) and scaled to unit
// length, as the authors' initialisation normalises every embedding row. Each forward pass records
// which tokens are padding (id 0) in the shared PaddingMask. The input is not differentiable: dx,
// when asked for, is 0.
#pragma once
#include <memory>

#include "nn/layer.hpp"
#include "nn/padding_mask.hpp"

namespace fedsilo {

template <typename T>
class TokenPositionEmbeddingT : public LayerT<T> {
 public:
  // Throws ConfigError for non-positive sizes or seqLen > maxLen. `mask` may be null.
  TokenPositionEmbeddingT(int vocab, int dim, int seqLen, int maxLen, std::shared_ptr<PaddingMask> mask);
  std::string kind() const override { return "token_position_embedding"; }
  Shape outputShape() const override { return Shape{1, seqLen_, dim_}; }
  std::vector<ParamSpec> paramSpecs() const override;
  void bind(T* params, T* grads) override;
  void initParams(Rng& rng, T* params) const override;
  void reserve(int maxBatch) override;
  // Throws DataError for a token id that is not an integer in [0, vocab).
  void forward(const CMapT<T>& x, MapT<T>& y, bool training) override;
  void backward(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) override;
  // Sample i's gradient: the token rows of its distinct tokens (nn/per_example.hpp) and position rows
  // 0 .. seqLen - 1, each holding dL/dy_t once.
  bool backwardPerExample(const CMapT<T>& x, const CMapT<T>& dz, MapT<T>* dx, double* norms2) override;

 private:
  Index tokenAt(const CMapT<T>& x, Index t, Index b) const;

  int vocab_, dim_, seqLen_, maxLen_;
  std::shared_ptr<PaddingMask> mask_;
  T* tok_ = nullptr;
  T* pos_ = nullptr;
  T* dtok_ = nullptr;
  T* dpos_ = nullptr;
};

}  // namespace fedsilo
