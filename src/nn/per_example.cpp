#include "nn/per_example.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "nn/dense.hpp"

namespace fedsilo {

template <typename T>
void addDenseGradNormsSquared(const CMapT<T>& x, const CMapT<T>& dz, double* norms2) {
  FEDSILO_ASSERT(x.cols() == dz.cols(), "input and gradient batch sizes differ");
  for (Index i = 0; i < x.cols(); ++i) {
    const double a2 = x.col(i).template cast<double>().squaredNorm();
    const double d2 = dz.col(i).template cast<double>().squaredNorm();
    norms2[i] += d2 * (a2 + 1.0);
  }
}

template <typename T>
PerExampleNormsT<T>::PerExampleNormsT(ModelT<T>& model) : model_(model) {
  for (std::size_t i = 0; i < model.numLayers(); ++i) {
    LayerT<T>& l = model.layer(i);
    if (!l.paramSpecs().empty() && dynamic_cast<DenseT<T>*>(&l) == nullptr)
      throw ConfigError(fmt("per-example gradient norms: layer ", i, " (", l.kind(),
                            ") is not supported yet; only dense layers carry parameters here"));
  }
}

template <typename T>
double PerExampleNormsT<T>::compute(const T* x, const std::int32_t* labels, int batch, double* norms2) {
  FEDSILO_ASSERT(batch > 0 && batch <= model_.maxBatch(), "batch ", batch, " exceeds reserved ", model_.maxBatch());
  const std::size_t L = model_.numLayers();
  acts_.resize(L);
  std::size_t widest = static_cast<std::size_t>(model_.inputSize());
  for (std::size_t i = 0; i < L; ++i) {
    const std::size_t rows = static_cast<std::size_t>(model_.layer(i).outputShape().size());
    acts_[i].resize(rows * batch);
    widest = std::max(widest, rows);
  }
  dy_.resize(widest * batch);
  dx_.resize(widest * batch);
  auto inputOf = [&](std::size_t i) { return i == 0 ? x : acts_[i - 1].data(); };
  auto rowsIn = [&](std::size_t i) { return i == 0 ? model_.inputSize() : model_.layer(i - 1).outputShape().size(); };
  for (std::size_t i = 0; i < L; ++i) {
    MapT<T> y(acts_[i].data(), model_.layer(i).outputShape().size(), batch);
    model_.layer(i).forward(CMapT<T>(inputOf(i), rowsIn(i), batch), y, true);
  }
  const int C = model_.numClasses();
  MapT<T> dl(dy_.data(), C, batch);
  const double loss = model_.loss().forwardBackward(CMapT<T>(acts_[L - 1].data(), C, batch), labels, dl);
  std::fill(norms2, norms2 + batch, 0.0);
  for (std::size_t i = L; i-- > 0;) {
    LayerT<T>& layer = model_.layer(i);
    const int outRows = layer.outputShape().size();
    CMapT<T> in(inputOf(i), rowsIn(i), batch), out(acts_[i].data(), outRows, batch), dy(dy_.data(), outRows, batch);
    if (dynamic_cast<DenseT<T>*>(&layer)) addDenseGradNormsSquared<T>(in, dy, norms2);
    MapT<T> dx(dx_.data(), rowsIn(i), batch);
    layer.backward(in, out, dy, i > 0 ? &dx : nullptr);
    std::swap(dy_, dx_);
  }
  // The loss' gradient carries the 1/batch of the mean; a sample's own loss does not.
  const double scale = static_cast<double>(batch) * batch;
  for (int i = 0; i < batch; ++i) norms2[i] *= scale;
  return loss;
}

template void addDenseGradNormsSquared<float>(const CMapT<float>&, const CMapT<float>&, double*);
template void addDenseGradNormsSquared<double>(const CMapT<double>&, const CMapT<double>&, double*);
template class PerExampleNormsT<float>;
template class PerExampleNormsT<double>;

}  // namespace fedsilo
