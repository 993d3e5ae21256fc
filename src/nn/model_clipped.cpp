// DP-SGD's per-example clipping by two backward passes (Lee and Kifer 2021, "Scaling up Differentially
// Private Deep Learning with Fast Per-Example Gradient Clipping", PoPETs, arXiv:2009.03106; Li, Tramer,
// Liang and Hashimoto 2022, arXiv:2110.05679; Bu, Mao and Xu 2022, arXiv:2205.10683, for convolutions):
// the first forms no batch weight gradient and yields every sample's gradient norm, each layer adding
// its share (LayerT::backwardPerExample: the ghost norm or a materialised per-sample gradient, whichever
// costs less; nn/per_example.hpp) and keeping its dL/d(output). Layers without parameters (ReLU,
// pooling, dropout, flatten) only pass dL/dx on. The clipped sum then needs no second pass through the
// network: each sample's dL/d(output) at every layer is linear in its own column of dL/dlogits, so
// scaling the kept columns by the clip factors and forming each layer's parameter gradient from them
// (LayerT::backward without dL/dx) gives sum_i min(1, C / ||g_i||) g_i ("book-keeping": Bu, Wang, Zha
// and Karypis 2023, "Differentially Private Optimization on Large Model at Small Cost", ICML,
// arXiv:2210.00038).
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "nn/model.hpp"
#include "nn/per_example.hpp"

namespace fedsilo {

template <typename T>
void ModelT<T>::ghostNormsSquared(const T* dLogits, int batch, double* norms2) {
  FEDSILO_ASSERT(!lastPoolFusion_, "DP-SGD's norms pass needs a forward without fused pooling");
  std::fill(norms2, norms2 + batch, 0.0);
  // ghostDz_ keeps every parameterised layer's dL/d(output), layers in model order (walked backwards).
  std::size_t end = 0;
  for (std::size_t i = 0; i < layers_.size(); ++i)
    if (!layerBlock_[i].empty()) end += static_cast<std::size_t>(outShapes_[i].size()) * batch;
  if (ghostDz_.size() < end) ghostDz_.assign(end, T(0));
  const T* dy = dLogits;
  T* bufs[2] = {gradA_.data(), gradB_.data()};
  int which = 0;
  for (std::size_t ii = layers_.size(); ii-- > 0;) {
    // A fused pair (layer at ii - 1, ReLU at ii): the layer's output was never stored, and the ReLU's
    // backward reads only its output and dL/dy.
    const bool fused = lastFusion_ && ii > 0 && fused_[ii - 1] != nullptr;
    const std::size_t first = fused ? ii - 1 : ii;
    const int inRows = first == 0 ? input_.size() : outShapes_[first - 1].size();
    const T* xin = first == 0 ? lastInput_ : acts_[first - 1].data();
    CMapT<T> a(xin, inRows, batch);
    CMapT<T> y(acts_[ii].data(), outShapes_[ii].size(), batch);
    CMapT<T> dyMap(dy, outShapes_[ii].size(), batch);
    MapT<T> dx(bufs[which], inRows, batch);
    MapT<T>* dxOrNull = first > 0 ? &dx : nullptr;
    LayerT<T>& layer = *layers_[first];
    if (layerBlock_[first].empty()) {
      if (dxOrNull) layer.backward(a, y, dyMap, dxOrNull);
      if (first == 0) break;
      dy = bufs[which];
      which ^= 1;
      ii = first;
      continue;
    }
    const Index outRows = outShapes_[first].size();
    end -= static_cast<std::size_t>(outRows) * batch;
    MapT<T> dz(ghostDz_.data() + end, outRows, batch);
    if (fused)
      dz = (y.array() > T(0)).select(dyMap, T(0));  // exactly ReluT::backward
    else
      dz = dyMap;
    CMapT<T> dzMap(ghostDz_.data() + end, outRows, batch);
    if (!layer.backwardPerExample(a, dzMap, dxOrNull, norms2)) {
      throw ConfigError(fmt("DP-SGD: layer ", first, " (", layer.kind(), ") has parameters but no per-example norms"));
    }
    if (first == 0) break;
    dy = bufs[which];
    which ^= 1;
    ii = first;
  }
}

template <typename T>
double ModelT<T>::lossAndClippedGradient(const T* x, const std::int32_t* labels, int batch, double clip,
                                         double* norms) {
  FEDSILO_ASSERT(clip > 0.0, "clip norm ", clip);
  // The norms pass reads every layer's stored output, which a fused layer, ReLU, max-pool triple does not
  // store; the triple's parts run on their own (the same bits: Model::setFusion).
  struct PoolFusionOff {
    bool& on;
    ~PoolFusionOff() { on = true; }
  };
  poolFusion_ = false;
  PoolFusionOff restore{poolFusion_};
  CMapT<T> logits = forward(x, batch, true);
  MapT<T> dl(dlogits_.data(), classes_, batch);
  const double loss = loss_->forwardBackward(logits, labels, dl);
  ghostNorms2_.resize(static_cast<std::size_t>(maxBatch_));
  ghostNormsSquared(dlogits_.data(), batch, ghostNorms2_.data());
  // dL/dlogits carries the mean's 1/batch; sample i's own loss does not: ||g_i|| = batch x the norm.
  for (int i = 0; i < batch; ++i) {
    const double norm = batch * std::sqrt(ghostNorms2_[static_cast<std::size_t>(i)]);
    if (norms) norms[i] = norm;
    const double factor = norm > clip ? clip / norm : 1.0;
    ghostNorms2_[static_cast<std::size_t>(i)] = factor * batch;  // from here on: the column's scale
  }
  // Each parameterised layer's gradient from its input and its kept dL/d(output), column i scaled; the
  // layers' backward without dL/dx. y is read by none of them (a fused layer's own output was never stored).
  std::size_t end = 0;
  for (std::size_t i = 0; i < layers_.size(); ++i)
    if (!layerBlock_[i].empty()) end += static_cast<std::size_t>(outShapes_[i].size()) * batch;
  for (std::size_t i = layers_.size(); i-- > 0;) {
    if (layerBlock_[i].empty()) continue;
    const Index inRows = i == 0 ? input_.size() : outShapes_[i - 1].size(), outRows = outShapes_[i].size();
    end -= static_cast<std::size_t>(outRows) * batch;
    MapT<T> dz(ghostDz_.data() + end, outRows, batch);
    for (int s = 0; s < batch; ++s) dz.col(s) *= static_cast<T>(ghostNorms2_[static_cast<std::size_t>(s)]);
    CMapT<T> x(i == 0 ? lastInput_ : acts_[i - 1].data(), inRows, batch);
    layers_[i]->backward(x, CMapT<T>(acts_[i].data(), outRows, batch), CMapT<T>(dz.data(), outRows, batch), nullptr);
  }
  return loss;
}

template double ModelT<float>::lossAndClippedGradient(const float*, const std::int32_t*, int, double, double*);
template double ModelT<double>::lossAndClippedGradient(const double*, const std::int32_t*, int, double, double*);

}  // namespace fedsilo
