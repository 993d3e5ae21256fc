// Parameter initialisation schemes (model.init_scheme, model.init_bias), PyTorch's formulas
// (torch.nn.init; docs/models.md states them with their sources):
//   pytorch_default  every tensor U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (Linear/Conv2d's reset_parameters:
//                    kaiming_uniform with a = sqrt(5), whose bound is exactly 1/sqrt(fan_in))
//   kaiming_normal   W ~ N(0, gain^2 / fan_in), gain = sqrt(2) (a = 0, ReLU, mode fan_in)
//   kaiming_uniform  W ~ U(-b, b), b = gain sqrt(3 / fan_in) = sqrt(6 / fan_in)
//   xavier_uniform   W ~ U(-b, b), b = sqrt(6 / (fan_in + fan_out)) (gain 1)
// with fan_in = in (dense) or in_channels k^2 (conv), fan_out = out or out_channels k^2. The scheme
// applies to dense and conv weights; LSTM and embedding weights keep PyTorch's defaults. Biases
// (every layer's) are drawn as pytorch_default does (`default`) or set to zero (`zero`).
#pragma once
#include "core/config.hpp"
#include "core/rng.hpp"
#include "nn/layer.hpp"

namespace fedsilo {

struct InitOptions {
  InitScheme scheme = InitScheme::PytorchDefault;
  BiasInit bias = BiasInit::Default;
  bool isPytorchDefault() const { return scheme == InitScheme::PytorchDefault && bias == BiasInit::Default; }
};

// Initialises `layer`'s parameters at `params` from `rng` (its tensors in order).
template <typename T>
void initializeLayer(const LayerT<T>& layer, T* params, Rng& rng, const InitOptions& options);

}  // namespace fedsilo
