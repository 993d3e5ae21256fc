// Per-example gradient norms without per-example gradients, for DP-SGD's per-example clipping
// (Abadi et al. 2016, arXiv:1607.00133): each sample's gradient is clipped to norm C before the batch
// sum, so the step needs ||g_i|| for every sample i of the batch, not the gradients themselves.
//
// Dense layer z = W a + b: the gradient of sample i's own loss is g_i(W) = d_i a_i^T, g_i(b) = d_i
// with d_i = dL_i/dz_i, so ||g_i||^2 = ||d_i||^2 (||a_i||^2 + 1): O(in + out) per sample instead of
// O(in x out) ("ghost norm"; Goodfellow 2015, "Efficient Per-Example Gradient Computations",
// arXiv:1510.01799). The squared norm of a sample's whole-model gradient is the sum over layers.
#pragma once
#include <cstdint>
#include <vector>

#include "nn/layer.hpp"
#include "nn/model.hpp"

namespace fedsilo {

// norms2[i] += ||dz_i||^2 (||x_i||^2 + 1) for the B columns of x (in x B, the layer's input) and dz
// (out x B, the gradient of each sample's loss with respect to the layer's pre-activation output).
template <typename T>
void addDenseGradNormsSquared(const CMapT<T>& x, const CMapT<T>& dz, double* norms2);

// Per-example squared L2 norms of the whole parameter gradient of each sample's own loss (the loss of
// that sample alone, not the batch mean) for models whose parameterised layers are all Dense (MLP,
// logreg, svm presets; ReLU and Dropout pass through). Runs its own training-mode forward and a
// backward walk over the model's layers: the layers' gradient slices (model.grads()) are overwritten
// with the batch-mean gradient as a side effect, and dropout draws its next masks as in a training
// step. Throws ConfigError naming the first parameterised layer that is not Dense.
template <typename T>
class PerExampleNormsT {
 public:
  explicit PerExampleNormsT(ModelT<T>& model);
  // Fills norms2[0..batch) and returns the mean batch loss; batch <= model.maxBatch().
  double compute(const T* x, const std::int32_t* labels, int batch, double* norms2);

 private:
  ModelT<T>& model_;
  std::vector<AlignedVector<T>> acts_;  // output of each layer
  AlignedVector<T> dy_, dx_;            // dL/d(output) of the current layer, dL/d(input)
};

using PerExampleNorms = PerExampleNormsT<float>;

}  // namespace fedsilo
