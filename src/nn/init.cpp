#include "nn/init.hpp"

#include <cmath>

#include "nn/conv2d.hpp"
#include "nn/dense.hpp"
#include "nn/feed_forward.hpp"
#include "nn/self_attention.hpp"

namespace fedsilo {

namespace {

// fan_out of a dense or conv layer's weight; 0 for other layers (which keep their own defaults).
template <typename T>
int fanOut(const LayerT<T>& layer) {
  if (const auto* d = dynamic_cast<const DenseT<T>*>(&layer)) return d->out();
  if (const auto* c = dynamic_cast<const Conv2DT<T>*>(&layer)) return c->outChannels() * c->kernel() * c->kernel();
  if (const auto* a = dynamic_cast<const SelfAttentionT<T>*>(&layer)) return a->dim();
  if (const auto* f = dynamic_cast<const FeedForwardT<T>*>(&layer)) return f->hidden();
  return 0;
}

// fan_out of tensor `index` of the layer whose fanOut() is `layerOut`: the feed-forward block's second
// product (w2, b2) maps hidden -> d, the other tensors have the layer's.
template <typename T>
int tensorFanOut(const LayerT<T>& layer, std::size_t index, int layerOut) {
  if (const auto* f = dynamic_cast<const FeedForwardT<T>*>(&layer)) return index >= 2 ? f->dim() : layerOut;
  return layerOut;
}

template <typename T>
void drawWeight(T* w, Index n, int fanIn, int fanOutValue, InitScheme scheme, Rng& rng) {
  const double in = fanIn > 0 ? fanIn : 1, gain = std::sqrt(2.0);
  switch (scheme) {
    case InitScheme::KaimingNormal: {
      const double sd = gain / std::sqrt(in);
      for (Index i = 0; i < n; ++i) w[i] = static_cast<T>(sd * rng.normal());
      return;
    }
    case InitScheme::KaimingUniform:
    case InitScheme::XavierUniform:
    case InitScheme::PytorchDefault: {
      const double bound = scheme == InitScheme::KaimingUniform   ? gain * std::sqrt(3.0 / in)
                           : scheme == InitScheme::XavierUniform ? std::sqrt(6.0 / (in + fanOutValue))
                                                                 : 1.0 / std::sqrt(in);
      for (Index i = 0; i < n; ++i) w[i] = static_cast<T>(rng.uniform(-bound, bound));
      return;
    }
  }
}

}  // namespace

template <typename T>
void initializeLayer(const LayerT<T>& layer, T* params, Rng& rng, const InitOptions& options) {
  const std::vector<ParamSpec> specs = layer.paramSpecs();
  const int out = fanOut(layer);
  if (options.isPytorchDefault() || out == 0) {
    layer.initParams(rng, params);  // the layer's own defaults (the only path of pytorch_default)
    if (options.bias == BiasInit::Zero) {
      Index off = 0;
      for (const ParamSpec& spec : specs) {
        if (spec.isBias) std::fill(params + off, params + off + spec.size, T(0));
        off += spec.size;
      }
    }
    return;
  }
  Index off = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const ParamSpec& spec = specs[i];
    T* p = params + off;
    if (!spec.isBias) {
      drawWeight(p, spec.size, spec.fanIn, tensorFanOut(layer, i, out), options.scheme, rng);
    } else if (options.bias == BiasInit::Zero) {
      std::fill(p, p + spec.size, T(0));
    } else {
      drawWeight(p, spec.size, spec.fanIn, tensorFanOut(layer, i, out), InitScheme::PytorchDefault, rng);
    }
    off += spec.size;
  }
}

template void initializeLayer<float>(const LayerT<float>&, float*, Rng&, const InitOptions&);
template void initializeLayer<double>(const LayerT<double>&, double*, Rng&, const InitOptions&);

}  // namespace fedsilo
