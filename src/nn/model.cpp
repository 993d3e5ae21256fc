#include "nn/model.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <type_traits>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "nn/dense.hpp"
#include "nn/kernel_table.hpp"
#include "nn/pool.hpp"
#include "nn/relu_fusable.hpp"

namespace fedsilo {

template <typename T>
ModelT<T>::ModelT(Shape input, int numClasses) : input_(input), classes_(numClasses) {
  FEDSILO_ASSERT(input.size() > 0 && numClasses > 0);
}

template <typename T>
LayerT<T>& ModelT<T>::add(std::unique_ptr<LayerT<T>> layer, const std::string& blockName) {
  FEDSILO_ASSERT(!finalized_, "cannot add layers after finalize()");
  const bool hasParams = !layer->paramSpecs().empty();
  FEDSILO_ASSERT(hasParams == !blockName.empty(), "layer ", layer->kind(),
                 hasParams ? " has parameters and needs a block name" : " has no parameters");
  if (hasParams) FEDSILO_ASSERT(blockIndex(blockName) < 0, "duplicate block name ", blockName);
  if (hasParams) blocks_.push_back(LayerBlock{blockName, 0, 0, {}});
  layerBlock_.push_back(blockName);
  outShapes_.push_back(layer->outputShape());
  layers_.push_back(std::move(layer));
  return *layers_.back();
}

template <typename T>
void ModelT<T>::setLoss(std::unique_ptr<LossT<T>> loss) {
  loss_ = std::move(loss);
}

template <typename T>
int ModelT<T>::blockIndex(const std::string& name) const {
  for (std::size_t i = 0; i < blocks_.size(); ++i)
    if (blocks_[i].name == name) return static_cast<int>(i);
  return -1;
}

template <typename T>
void ModelT<T>::finalize() {
  FEDSILO_ASSERT(!finalized_);
  FEDSILO_ASSERT(!layers_.empty(), "model has no layers");
  FEDSILO_ASSERT(outShapes_.back().size() == classes_, "last layer outputs ", outShapes_.back().size(),
                 " values, expected ", classes_, " classes");
  if (!loss_) loss_ = std::make_unique<SoftmaxCrossEntropyT<T>>();
  Index off = 0;
  std::size_t b = 0;
  layerParamOffset_.assign(layers_.size(), 0);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    layerParamOffset_[i] = off;
    if (layerBlock_[i].empty()) continue;
    LayerBlock& blk = blocks_[b++];
    blk.offset = off;
    for (const auto& spec : layers_[i]->paramSpecs()) {
      blk.tensors.push_back(ParamTensor{blk.name + "." + spec.name, off, spec.size, spec.isBias});
      off += spec.size;
    }
    blk.size = off - blk.offset;
  }
  allocateOrFail(fmt("the model's parameters and gradients (", off, " parameters)"),
                 bytesOf<T>(2 * static_cast<std::uint64_t>(off)), [&] {
                   params_.assign(static_cast<std::size_t>(off), T(0));
                   grads_.assign(static_cast<std::size_t>(off), T(0));
                 });
  for (std::size_t i = 0; i < layers_.size(); ++i)
    layers_[i]->bind(params_.data() + layerParamOffset_[i], grads_.data() + layerParamOffset_[i]);
  fused_.assign(layers_.size(), nullptr);
  dense_.assign(layers_.size(), nullptr);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    dense_[i] = dynamic_cast<DenseT<T>*>(layers_[i].get());
    if (i + 1 < layers_.size() && dynamic_cast<ReluT<T>*>(layers_[i + 1].get()) != nullptr)
      fused_[i] = dynamic_cast<ReluFusableT<T>*>(layers_[i].get());
  }
  findPooled();
  finalized_ = true;
}

// Layer, ReLU, 2 x 2 max-pool triples whose backward runs as one pass (PoolFusableT).
template <typename T>
void ModelT<T>::findPooled() {
  pooled_.assign(layers_.size(), nullptr);
  poolAfter_.assign(layers_.size(), nullptr);
  for (std::size_t i = 0; i + 2 < layers_.size(); ++i) {
    auto* layer = dynamic_cast<PoolFusableT<T>*>(layers_[i].get());
    auto* pool = dynamic_cast<MaxPool2DT<T>*>(layers_[i + 2].get());
    if (!fused_[i] || !layer || !pool || !layer->poolFusable()) continue;
    // the pool keeps window positions only for 2 x 2 windows with stride 2, here over the ReLU's output
    if (!pool->twoByTwoOver(outShapes_[i + 1])) continue;
    pooled_[i] = layer;
    poolAfter_[i] = pool;
  }
}

template <typename T>
void ModelT<T>::initialize(Rng& rng) {
  FEDSILO_ASSERT(finalized_);
  for (std::size_t i = 0; i < layers_.size(); ++i)
    if (!layerBlock_[i].empty()) initializeLayer(*layers_[i], params_.data() + layerParamOffset_[i], rng, init_);
}

template <typename T>
void ModelT<T>::reserve(int maxBatch) {
  FEDSILO_ASSERT(finalized_ && maxBatch > 0);
  if (maxBatch <= maxBatch_) return;
  const std::uint64_t batch = static_cast<std::uint64_t>(maxBatch);
  std::uint64_t actValues = 0, widest = static_cast<std::uint64_t>(input_.size());
  for (const Shape& s : outShapes_) {
    actValues += static_cast<std::uint64_t>(s.size()) * batch;
    widest = std::max<std::uint64_t>(widest, static_cast<std::uint64_t>(s.size()));
  }
  const std::uint64_t values = actValues + 2 * widest * batch + static_cast<std::uint64_t>(classes_) * batch;
  allocateOrFail(fmt("the model's activations and gradients for batches of ", maxBatch, " samples"), bytesOf<T>(values),
                 [&] {
                   acts_.resize(layers_.size());
                   for (std::size_t i = 0; i < layers_.size(); ++i)
                     acts_[i].assignZeros(static_cast<std::size_t>(outShapes_[i].size()) * batch);
                   gradA_.assignZeros(widest * batch);
                   gradB_.assignZeros(widest * batch);
                   dlogits_.assignZeros(static_cast<std::size_t>(classes_) * batch);
                 });
  // Each layer checks and reports its own buffers (it alone knows their sizes).
  for (auto& layer : layers_) layer->reserve(maxBatch);
  maxBatch_ = maxBatch;
}

template <typename T>
int ModelT<T>::reserveBatch(int trainBatch, int evalBatch) {
  constexpr int kChunk = 32;
  const int b = std::max(trainBatch, std::min(evalBatch, kChunk));
  return b <= kChunk ? b : (b + kChunk - 1) / kChunk * kChunk;
}

template <typename T>
void ModelT<T>::setRandomContext(std::uint64_t seed, std::int64_t client, std::int64_t round) {
  for (std::size_t i = 0; i < layers_.size(); ++i)
    layers_[i]->setRandomContext(seed, client, round, static_cast<int>(i));
}

template <typename T>
CMapT<T> ModelT<T>::forward(const T* x, int batch, bool training) {
  FEDSILO_ASSERT(batch > 0 && batch <= maxBatch_, "batch ", batch, " exceeds reserved ", maxBatch_);
  lastInput_ = x;
  lastBatch_ = batch;
  lastFusion_ = fusion_;
  lastPoolFusion_ = fusion_ && poolFusion_;
  const T* in = x;
  int inRows = input_.size();
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    CMapT<T> xin(in, inRows, batch);
    if (lastPoolFusion_ && pooled_[i]) {  // layer + ReLU + max-pool: the pool's output directly, acts_[i], acts_[i + 1] unused
      i += 2;
      MapT<T> y(acts_[i].data(), outShapes_[i].size(), batch);
      pooled_[i - 2]->forwardReluPool(xin, y, poolAfter_[i - 2]->windowPositions(outShapes_[i - 1]));
    } else if (fusion_ && fused_[i]) {  // layer + ReLU: the ReLU's output directly, acts_[i] unused
      ++i;
      MapT<T> y(acts_[i].data(), outShapes_[i].size(), batch);
      fused_[i - 1]->forwardRelu(xin, y);
    } else {
      MapT<T> y(acts_[i].data(), outShapes_[i].size(), batch);
      layers_[i]->forward(xin, y, training);
    }
    in = acts_[i].data();
    inRows = outShapes_[i].size();
  }
  return CMapT<T>(acts_.back().data(), classes_, batch);
}

template <typename T>
void ModelT<T>::backward(const T* dLogits, int batch, T* dInput) {
  backwardImpl(dLogits, batch, dInput, nullptr);
}

template <typename T>
void ModelT<T>::backwardLayer(std::size_t first, std::size_t last, const CMapT<T>& x, const CMapT<T>& y,
                              const CMapT<T>& dy, MapT<T>* dx, const T* sgdLr) {
  const bool fused = first != last;
  if (sgdLr && dense_[first]) {  // never the first of a triple: DenseT is not PoolFusableT
    dense_[first]->backwardSgd(x, fused ? &y : nullptr, dy, dx, *sgdLr);
    return;
  }
  if (last == first + 2)  // layer, ReLU, max-pool: y and dy are the pool's
    pooled_[first]->backwardReluPool(x, y.data(), dy.data(),
                                     poolAfter_[first]->windowPositions(outShapes_[first + 1]), dx);
  else if (fused)
    fused_[first]->backwardRelu(x, y, dy, dx);
  else
    layers_[last]->backward(x, y, dy, dx);
  if (sgdLr && !layerBlock_[first].empty()) {  // a parameterised layer without a fused update
    const Index off = layerParamOffset_[first];
    const Index n = (first + 1 < layers_.size() ? layerParamOffset_[first + 1] : numParams()) - off;
    if constexpr (std::is_same<T, float>::value) {
      kernels::active().dense.sgd(params_.data() + off, grads_.data() + off, n, *sgdLr);
    } else {
      for (Index i = off; i < off + n; ++i) params_[i] = std::fma(-*sgdLr, grads_[i], params_[i]);
    }
  }
}

template <typename T>
void ModelT<T>::backwardImpl(const T* dLogits, int batch, T* dInput, const T* sgdLr) {
  FEDSILO_ASSERT(batch == lastBatch_ && lastInput_ != nullptr, "backward without matching forward");
  const T* dy = dLogits;
  T* bufs[2] = {gradA_.data(), gradB_.data()};
  int which = 0;
  for (std::size_t ii = layers_.size(); ii-- > 0;) {
    // A fused pair (layer at ii - 1, ReLU at ii) is one step: from the ReLU's output and dL/dy to
    // the first layer's input gradient; so is a fused triple (layer at ii - 2, ReLU, max-pool at ii).
    const bool pooled = lastPoolFusion_ && ii > 1 && pooled_[ii - 2] != nullptr;
    const bool fused = !pooled && lastFusion_ && ii > 0 && fused_[ii - 1] != nullptr;
    const std::size_t first = pooled ? ii - 2 : fused ? ii - 1 : ii;  // the layer whose input we differentiate into
    const int inRows = first == 0 ? input_.size() : outShapes_[first - 1].size();
    const T* xin = first == 0 ? lastInput_ : acts_[first - 1].data();
    CMapT<T> x(xin, inRows, batch);
    CMapT<T> y(acts_[ii].data(), outShapes_[ii].size(), batch);
    CMapT<T> dyMap(dy, outShapes_[ii].size(), batch);
    if (first == 0) {
      if (dInput) {
        MapT<T> dx(dInput, inRows, batch);
        backwardLayer(first, ii, x, y, dyMap, &dx, sgdLr);
      } else {
        backwardLayer(first, ii, x, y, dyMap, nullptr, sgdLr);
      }
    } else {
      MapT<T> dx(bufs[which], inRows, batch);
      backwardLayer(first, ii, x, y, dyMap, &dx, sgdLr);
      dy = bufs[which];
      which ^= 1;
    }
    ii = first;
  }
}

template <typename T>
double ModelT<T>::lossAndGradient(const T* x, const std::int32_t* labels, int batch) {
  CMapT<T> logits = forward(x, batch, true);
  MapT<T> dl(dlogits_.data(), classes_, batch);
  const double loss = loss_->forwardBackward(logits, labels, dl);
  backward(dlogits_.data(), batch, nullptr);
  return loss;
}

template <typename T>
double ModelT<T>::sgdStep(const T* x, const std::int32_t* labels, int batch, T lr) {
  CMapT<T> logits = forward(x, batch, true);
  MapT<T> dl(dlogits_.data(), classes_, batch);
  const double loss = loss_->forwardBackward(logits, labels, dl);
  backwardImpl(dlogits_.data(), batch, nullptr, &lr);
  return loss;
}

template <typename T>
double ModelT<T>::evaluate(const T* x, const std::int32_t* labels, int batch, std::int32_t* predictions) {
  double total = 0.0;
  for (int b0 = 0; b0 < batch; b0 += maxBatch_) {
    const int n = std::min(maxBatch_, batch - b0);
    CMapT<T> logits = forward(x + static_cast<Index>(b0) * input_.size(), n, false);
    if (predictions) {
      for (int j = 0; j < n; ++j) {
        Index arg = 0;
        logits.col(j).maxCoeff(&arg);
        predictions[b0 + j] = static_cast<std::int32_t>(arg);
      }
    }
    total = loss_->lossSum(logits, labels + b0, total);
  }
  return total;
}

template <typename T>
double ModelT<T>::trainFlopsPerSample() const {
  double flops = 0.0;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const FlopCount c = layers_[i]->flopsPerSample();
    flops += c.forward + c.paramGrad + (i > 0 ? c.inputGrad : 0.0);
  }
  return flops;
}

template <typename T>
std::string ModelT<T>::summary() const {
  std::ostringstream os;
  for (const auto& b : blocks_) os << b.name << "(" << b.size << ") ";
  os << "total " << params_.size() << " parameters";
  return os.str();
}

template class ModelT<float>;
template class ModelT<double>;

}  // namespace fedsilo
