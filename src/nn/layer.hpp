// The Layer interface. A layer owns no parameter memory: the Model allocates ONE flat buffer for
// all parameters (and one for gradients) and binds each layer to its slice, so aggregation, masks,
// MPI and checkpoints are single-buffer operations.
//
// Layers are templates on the scalar type: float for training, double for the finite-difference
// gradient tests. Activations are column-major, one column per sample (features x batch).
#pragma once
#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "core/types.hpp"

namespace fedsilo {

template <typename T>
using MatT = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <typename T>
using MapT = Eigen::Map<MatT<T>>;
template <typename T>
using CMapT = Eigen::Map<const MatT<T>>;
template <typename T>
using MatRMT = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using MapRMT = Eigen::Map<MatRMT<T>>;
template <typename T>
using CMapRMT = Eigen::Map<const MatRMT<T>>;
template <typename T>
using VecT = Eigen::Matrix<T, Eigen::Dynamic, 1>;
template <typename T>
using VecMapT = Eigen::Map<VecT<T>>;

// One parameter tensor of a layer, e.g. "weight" (out*in values) or "bias".
struct ParamSpec {
  std::string name;  // "weight", "bias", "w_ih", ...
  Index size = 0;
  bool isBias = false;  // PLayer-FL's sensitivity skips biases by default
  int fanIn = 1;        // for the default PyTorch-style U(-1/sqrt(fanIn), 1/sqrt(fanIn)) init
};

// The floating-point operations one sample costs a layer in training (docs/system.md, "FLOPs"): a
// multiply-add counts 2, an addition, product, comparison or nonlinearity 1. The input gradient is
// apart because the model's first layer never computes it.
struct FlopCount {
  double forward = 0.0;
  double paramGrad = 0.0;  // the parameter gradients, and what they need besides (an LSTM's recurrence)
  double inputGrad = 0.0;  // dL/dx
};

template <typename T>
class LayerT {
 public:
  virtual ~LayerT() = default;

  virtual std::string kind() const = 0;  // "dense", "relu", "conv2d", ...
  // Output shape for the input shape given at construction.
  virtual Shape outputShape() const = 0;
  // Training FLOPs per sample for the input shape given at construction. Default: an elementwise layer,
  // one operation per output value forward and one backward.
  virtual FlopCount flopsPerSample() const {
    const double n = outputShape().size();
    return {n, 0.0, n};
  }
  virtual std::vector<ParamSpec> paramSpecs() const { return {}; }
  // Called once by the Model: `params`/`grads` point at this layer's slice (specs in order).
  virtual void bind(T* params, T* grads) {
    (void)params;
    (void)grads;
  }
  // Default initialisation: every tensor U(-1/sqrt(fanIn), 1/sqrt(fanIn)) (PyTorch's Linear/Conv).
  virtual void initParams(Rng& rng, T* params) const;
  // Preallocate every buffer needed for batches up to maxBatch: no allocation while training.
  virtual void reserve(int maxBatch) { (void)maxBatch; }
  // Random streams for stochastic layers (dropout): keyed by (seed, client, round), never rank.
  virtual void setRandomContext(std::uint64_t seed, std::int64_t client, std::int64_t round, int layerIndex) {
    (void)seed;
    (void)client;
    (void)round;
    (void)layerIndex;
  }

  // y = f(x). x: in x B, y: out x B (already sized). `training` switches dropout etc.
  virtual void forward(const CMapT<T>& x, MapT<T>& y, bool training) = 0;
  // Given x, y (from forward) and dL/dy, OVERWRITE this layer's parameter gradients with dL/dparams
  // and, when dx != nullptr, write dL/dx. Called right after forward on the same batch.
  virtual void backward(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) = 0;
  // DP-SGD's norms pass (nn/per_example.hpp; Model::lossAndClippedGradient), right after forward on the
  // same batch: dz is dL/d(this layer's output), column i holding the gradient of sample i's own loss;
  // adds to norms2[i] the squared norm of sample i's gradient of this layer's parameters and, when
  // dx != nullptr, writes dL/dx. May overwrite the parameter gradients. False: the layer has
  // parameters but no per-example norms (Model::lossAndClippedGradient then refuses the model).
  virtual bool backwardPerExample(const CMapT<T>& x, const CMapT<T>& dz, MapT<T>* dx, double* norms2) {
    (void)x;
    (void)dz;
    (void)dx;
    (void)norms2;
    return false;
  }
};

using Layer = LayerT<float>;

template <typename T>
void LayerT<T>::initParams(Rng& rng, T* params) const {
  Index off = 0;
  for (const auto& spec : paramSpecs()) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(spec.fanIn > 0 ? spec.fanIn : 1));
    for (Index i = 0; i < spec.size; ++i) params[off + i] = static_cast<T>(rng.uniform(-bound, bound));
    off += spec.size;
  }
}

}  // namespace fedsilo
