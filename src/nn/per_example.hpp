// Per-example gradient norms for DP-SGD's per-example clipping (Abadi et al. 2016, arXiv:1607.00133):
// each sample's gradient is clipped to norm C before the batch sum, so the step needs ||g_i|| for every
// sample i of the batch, not the gradients themselves. The squared norm of a sample's whole-model
// gradient is the sum over layers; Model::lossAndClippedGradient (nn/model_clipped.cpp) walks the
// layers, each adding its share (LayerT::backwardPerExample), and clips.
//
// Every parameterised layer of the zoo has a weight gradient of one form: for sample i,
//   G_i = sum_t d_{i,t} a_{i,t}^T        (p x d)
// over T "positions" t, with a_{i,t} the layer's input at t (d values) and d_{i,t} the gradient of
// sample i's loss with respect to the output at t (p values), and a bias gradient sum_t d_{i,t}:
//   Dense          T = 1
//   Conv2D         t = output pixel, a = the im2col patch (inC k k values), d = dL/dz over the channels
//   LSTM           t = time step, a = x_t (W_ih) or h_{t-1} (W_hh), d = dL/d(gate pre-activations)
//   feed-forward   t = token, a = x_t (W_1) or relu(W_1 x_t + b_1) (W_2), d = dL/d(the product)
//   attention      t = token, a = x_t (W_q, W_k, W_v stacked: d = [dq; dk; dv]) or the attended a_t (W_o)
// Embeddings' per-sample gradients are sparse instead: one row per distinct token of the sequence.
// ||G_i||^2 can be had two ways (Bu, Mao and Xu 2022, "Scalable and Efficient Training of Large
// Convolutional Neural Networks with Differential Privacy", NeurIPS, arXiv:2205.10683, "mixed ghost
// clipping") **[M]**:
//   materialise   form G_i and take its norm: T d p multiply-adds per sample;
//   ghost norm    ||G_i||^2 = sum_{t,t'} <a_t, a_t'> <d_t, d_t'> (Goodfellow 2015, arXiv:1510.01799;
//                 Li et al. 2022, arXiv:2110.05679): two T x T Gram matrices, T^2 (d + p) multiply-adds.
// perExampleMethod picks the cheaper per layer: the ghost norm when T (d + p) < d p. With T = 1 (Dense)
// the ghost norm is ||d||^2 ||a||^2 and always wins; for convolutions it wins on late layers (few pixels,
// many channels) and loses on early ones (many pixels, few channels).
#pragma once

#include <Eigen/Core>

#include "nn/layer.hpp"

namespace fedsilo {

enum class PerExampleMethod { Materialise, Ghost };

// The cheaper way to ||sum_t d_t a_t^T||^2 for T positions, inputs of d values and outputs of p values.
PerExampleMethod perExampleMethod(Index positions, Index inDim, Index outDim);

// ||sum_t d_t a_t^T||_F^2 from at (d x T: column t is a_t) and dt (p x T: column t is d_t), by `method`;
// both give the same value up to rounding. Accumulates in T (a relative error of about 1e-7 in float
// moves a clip factor by as little).
template <typename DerivedA, typename DerivedD>
double outerSumNormSquared(const Eigen::MatrixBase<DerivedA>& at, const Eigen::MatrixBase<DerivedD>& dt,
                           PerExampleMethod method) {
  if (method == PerExampleMethod::Materialise) return static_cast<double>((dt * at.transpose()).squaredNorm());
  return static_cast<double>((at.transpose() * at).cwiseProduct(dt.transpose() * dt).sum());
}

// norms2[i] += ||dz_i||^2 (||x_i||^2 + 1) for the B columns of x (in x B, the layer's input) and dz
// (out x B, the gradient of each sample's loss with respect to the layer's pre-activation output): a
// Dense layer's weight and bias, the T = 1 case of the ghost norm.
template <typename T>
void addDenseGradNormsSquared(const CMapT<T>& x, const CMapT<T>& dz, double* norms2);

// The squared norm of one sample's gradient of an embedding table: g holds dL/d(output) at `steps`
// positions (time-major, `dim` values each) and tokens[t] the row position t read. The sample's gradient
// has one row per distinct token v, the sum of g_t over the positions holding v; this is the sum of
// those rows' squared norms. Uses `row` (dim values) as scratch.
template <typename T>
double tokenRowsNormSquared(const T* g, const Index* tokens, Index steps, Index dim, VecT<T>& row);

// The squared norm of a bias gradient sum_t d_t, d holding the d_t as columns.
template <typename Derived>
double biasNormSquared(const Eigen::MatrixBase<Derived>& d) {
  return static_cast<double>(d.rowwise().sum().squaredNorm());
}

}  // namespace fedsilo
