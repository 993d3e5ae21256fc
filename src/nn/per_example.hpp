// Per-example gradient norms without per-example gradients, for DP-SGD's per-example clipping
// (Abadi et al. 2016, arXiv:1607.00133): each sample's gradient is clipped to norm C before the batch
// sum, so the step needs ||g_i|| for every sample i of the batch, not the gradients themselves.
//
// Dense layer z = W a + b: the gradient of sample i's own loss is g_i(W) = d_i a_i^T, g_i(b) = d_i
// with d_i = dL_i/dz_i, so ||g_i||^2 = ||d_i||^2 (||a_i||^2 + 1): O(in + out) per sample instead of
// O(in x out) ("ghost norm"; Goodfellow 2015, "Efficient Per-Example Gradient Computations",
// arXiv:1510.01799). The squared norm of a sample's whole-model gradient is the sum over layers;
// Model::lossAndClippedGradient (nn/model_clipped.cpp) walks the layers and clips.
#pragma once

#include "nn/layer.hpp"

namespace fedsilo {

// norms2[i] += ||dz_i||^2 (||x_i||^2 + 1) for the B columns of x (in x B, the layer's input) and dz
// (out x B, the gradient of each sample's loss with respect to the layer's pre-activation output).
template <typename T>
void addDenseGradNormsSquared(const CMapT<T>& x, const CMapT<T>& dz, double* norms2);

}  // namespace fedsilo
