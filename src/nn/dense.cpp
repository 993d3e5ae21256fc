#include "nn/dense.hpp"

#include "core/error.hpp"

namespace fedsilo {

template <typename T>
DenseT<T>::DenseT(int in, int out) : in_(in), out_(out) {
  FEDSILO_ASSERT(in > 0 && out > 0);
}

template <typename T>
std::vector<ParamSpec> DenseT<T>::paramSpecs() const {
  return {{"weight", static_cast<Index>(in_) * out_, false, in_}, {"bias", out_, true, in_}};
}

template <typename T>
void DenseT<T>::bind(T* params, T* grads) {
  w_ = params;
  b_ = params + static_cast<Index>(in_) * out_;
  dw_ = grads;
  db_ = grads + static_cast<Index>(in_) * out_;
}

template <typename T>
void DenseT<T>::forward(const CMapT<T>& x, MapT<T>& y, bool) {
  CMapRMT<T> w(w_, out_, in_);
  Eigen::Map<const VecT<T>> b(b_, out_);
  y.noalias() = w * x;
  y.colwise() += b;
}

template <typename T>
void DenseT<T>::backward(const CMapT<T>& x, const CMapT<T>&, const CMapT<T>& dy, MapT<T>* dx) {
  MapRMT<T> dw(dw_, out_, in_);
  Eigen::Map<VecT<T>> db(db_, out_);
  dw.noalias() = dy * x.transpose();
  db.noalias() = dy.rowwise().sum();
  if (dx) {
    CMapRMT<T> w(w_, out_, in_);
    dx->noalias() = w.transpose() * dy;
  }
}

template <typename T>
void ReluT<T>::forward(const CMapT<T>& x, MapT<T>& y, bool) {
  y = x.cwiseMax(T(0));
}

template <typename T>
void ReluT<T>::backward(const CMapT<T>&, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) {
  if (dx) *dx = (y.array() > T(0)).select(dy, T(0));
}

template class DenseT<float>;
template class DenseT<double>;
template class ReluT<float>;
template class ReluT<double>;

}  // namespace fedsilo
