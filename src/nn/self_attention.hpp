// Single-head self-attention with an output projection and a residual connection, the attention
// block of the PLayer-FL authors' text transformer (their Attention + proj1, code/models.py):
//   q_t = W_q x_t,  k_t = W_k x_t,  v_t = W_v x_t              (no biases)
//   a_i = sum_j softmax_j(k_j . q_i / sqrt(d)) v_j              (keys j that are padding get weight 0)
//   y_i = x_i + W_o a_i + b_o
// Every token attends to every non-padding token of its sequence (no causal mask). A sequence
// made of padding only attends to all its positions (the authors' masked softmax would give NaN).
// No LayerNorm, as the authors have none.
//
// Activations are token columns (nn/token_columns.hpp). Parameters (one federation block):
// w_query, w_key, w_value [d][d] (contiguous, so the three projections are one [3d][d] GEMM),
// w_proj [d][d], b_proj [d]; fan-in d for all (model.init_scheme applies to the weights, fan-out
// d). The projections and the weight gradients are GEMMs over all T * B tokens; the scores and the weighted sums are per-sample T x T GEMMs, all on nn/packed_gemm.hpp.
#pragma once
#include <memory>

#include "nn/packed_gemm.hpp"
#include "nn/layer.hpp"
#include "nn/padding_mask.hpp"

namespace fedsilo {

template <typename T>
class SelfAttentionT : public LayerT<T> {
 public:
  // `mask` (may be null: no padding) is the one the embedding layer before this one writes.
  SelfAttentionT(int dim, int seqLen, std::shared_ptr<PaddingMask> mask);
  std::string kind() const override { return "self_attention"; }
  Shape outputShape() const override { return Shape{1, seqLen_, dim_}; }
  std::vector<ParamSpec> paramSpecs() const override;
  void bind(T* params, T* grads) override;
  void reserve(int maxBatch) override;
  void forward(const CMapT<T>& x, MapT<T>& y, bool training) override;
  void backward(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) override;
  // Per sample, W_o and the stacked W_q, W_k, W_v as sums over its tokens of outer products
  // (nn/per_example.hpp: a_t the attended a_t, then x_t with d_t = [dq_t; dk_t; dv_t]), each by the
  // cheaper route for T tokens, plus b_o. dL/dA goes to its own buffer: the ordinary backward pass
  // that follows still reads A.
  bool backwardPerExample(const CMapT<T>& x, const CMapT<T>& dz, MapT<T>* dx, double* norms2) override;
  int dim() const { return dim_; }

 private:
  // dqkv_ = dL/d[q; k; v] of every token from da = dL/dA (d x TB) through the weighted sums and the
  // softmax, one sample at a time.
  void queryKeyValueGradient(const T* da, Index B);
  // dx = dY (the residual) + W_qkv^T dqkv_.
  void inputGradient(const CMapT<T>& dy, Index TB, MapT<T>& dx);
  // Column i of `scores` (T x T, scores of query i over the keys) becomes softmax over the sample's
  // non-padding keys.
  void maskedSoftmax(T* scores, Index b) const;

  int dim_, seqLen_;
  std::shared_ptr<PaddingMask> mask_;
  T* wqkv_ = nullptr;
  T* wo_ = nullptr;
  T* bo_ = nullptr;
  T* dwqkv_ = nullptr;
  T* dwo_ = nullptr;
  T* dbo_ = nullptr;
  int maxBatch_ = 0;
  AlignedVector<T> qkv_;   // 3d x TB: q, k, v of every token
  AlignedVector<T> probs_; // T x T per sample: column i = attention weights of query i
  AlignedVector<T> attn_;  // d x TB: a_i; reused for dL/da in backward
  AlignedVector<T> dqkv_;  // 3d x TB
  AlignedVector<T> dprobs_;  // T x T: one sample's dL/dprobs, then dL/dscores
  AlignedVector<T> dattn_;   // d x TB: dL/dA in the per-example pass (sized on its first use)
  PackedGemm<T> gemmQkv_, gemmScores_, gemmMix_, gemmProj_, gemmProjBack_, gemmDwo_, gemmDwqkv_, gemmDx_;
};

}  // namespace fedsilo
