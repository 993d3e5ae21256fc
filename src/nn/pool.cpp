#include "nn/pool.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "nn/kernel_table.hpp"
#include "nn/pool_kernels.hpp"

namespace fedsilo {

namespace {

// The 2 x 2, stride 2 pool: the active kernel set's for float, the plain loops otherwise.
void pool2x2(const float* x, Index planes, int h, int w, float* y, std::uint8_t* pos) {
  kernels::active().pool.maxPool2x2(x, planes, h, w, y, pos);
}
void pool2x2(const double* x, Index planes, int h, int w, double* y, std::uint8_t* pos) {
  kernels::maxPool2x2Plain(x, planes, h, w, y, pos);
}
void pool2x2Backward(const float* dy, const std::uint8_t* pos, Index planes, int h, int w, float* dx) {
  kernels::active().pool.maxPool2x2Backward(dy, pos, planes, h, w, dx);
}
void pool2x2Backward(const double* dy, const std::uint8_t* pos, Index planes, int h, int w, double* dx) {
  kernels::maxPool2x2BackwardPlain(dy, pos, planes, h, w, dx);
}

}  // namespace

template <typename T>
MaxPool2DT<T>::MaxPool2DT(int c, int h, int w, int k, int stride)
    : c_(c), h_(h), w_(w), k_(k), stride_(stride), twoByTwo_(k == 2 && stride == 2) {
  if (c <= 0 || k <= 0 || stride <= 0 || h < k || w < k)
    throw ConfigError(fmt("maxpool2d: window ", k, " (stride ", stride, ") does not fit input ", c, "x", h, "x", w));
  oh_ = (h - k) / stride + 1;
  ow_ = (w - k) / stride + 1;
  outSize_ = static_cast<Index>(c) * oh_ * ow_;
}

template <typename T>
void MaxPool2DT<T>::reserve(int maxBatch) {
  FEDSILO_ASSERT(maxBatch > 0);
  if (maxBatch <= maxBatch_) return;
  maxBatch_ = maxBatch;
  const std::size_t values = static_cast<std::size_t>(outSize_) * static_cast<std::size_t>(maxBatch);
  if (twoByTwo_) {
    allocateOrFail(fmt("the maxpool2d position buffer for batches of ", maxBatch, " samples"), values,
                   [&] { pos_.assign(values, 0); });
    return;
  }
  allocateOrFail(fmt("the maxpool2d index buffer for batches of ", maxBatch, " samples"),
                 bytesOf<std::int32_t>(values), [&] { argmax_.assign(values, 0); });
}

template <typename T>
void MaxPool2DT<T>::forward(const CMapT<T>& x, MapT<T>& y, bool) {
  const Index batch = x.cols();
  FEDSILO_ASSERT(batch <= maxBatch_, "maxpool2d: batch ", batch, " exceeds reserved ", maxBatch_);
  if (twoByTwo_) return pool2x2(x.data(), batch * c_, h_, w_, y.data(), pos_.data());
  const Index inSize = x.rows();
  for (Index b = 0; b < batch; ++b) {
    const T* in = x.data() + b * inSize;
    T* out = y.data() + b * outSize_;
    std::int32_t* arg = argmax_.data() + b * outSize_;
    Index o = 0;
    for (int c = 0; c < c_; ++c)
      for (int oh = 0; oh < oh_; ++oh, o += ow_) poolRowGeneric(in, c, oh, out + o, arg + o);
  }
}

template <typename T>
void MaxPool2DT<T>::poolRowGeneric(const T* in, int c, int oh, T* out, std::int32_t* arg) const {
  const int planeOff = c * h_ * w_;
  for (int ow = 0; ow < ow_; ++ow) {
    int best = planeOff + (oh * stride_) * w_ + ow * stride_;
    T bestVal = in[best];
    for (int kh = 0; kh < k_; ++kh) {
      const int rowOff = planeOff + (oh * stride_ + kh) * w_ + ow * stride_;
      for (int kw = 0; kw < k_; ++kw) {
        const T v = in[rowOff + kw];
        // Strictly greater keeps the first maximum; the first NaN takes the window.
        if (v > bestVal || (std::isnan(v) && !std::isnan(bestVal))) {
          bestVal = v;
          best = rowOff + kw;
        }
      }
    }
    out[ow] = bestVal;
    arg[ow] = best;
  }
}

template <typename T>
void MaxPool2DT<T>::backward(const CMapT<T>& x, const CMapT<T>&, const CMapT<T>& dy, MapT<T>* dx) {
  if (!dx) return;
  const Index batch = x.cols();
  if (twoByTwo_) return pool2x2Backward(dy.data(), pos_.data(), batch * c_, h_, w_, dx->data());
  const Index inSize = x.rows();
  dx->setZero();
  for (Index b = 0; b < batch; ++b) {
    T* g = dx->data() + b * inSize;
    const T* gy = dy.data() + b * outSize_;
    const std::int32_t* arg = argmax_.data() + b * outSize_;
    // += : overlapping windows (stride < k) can route several outputs to one input.
    for (Index o = 0; o < outSize_; ++o) g[arg[o]] += gy[o];
  }
}

template <typename T>
GlobalAvgPoolT<T>::GlobalAvgPoolT(int c, int h, int w) : c_(c), hw_(h * w) {
  if (c <= 0 || h <= 0 || w <= 0) throw ConfigError(fmt("global_avg_pool: invalid input ", c, "x", h, "x", w));
}

template <typename T>
void GlobalAvgPoolT<T>::forward(const CMapT<T>& x, MapT<T>& y, bool) {
  const Index batch = x.cols();
  const T inv = T(1) / static_cast<T>(hw_);
  for (Index b = 0; b < batch; ++b) {
    // A sample's column viewed as hw x C (column-major): one column per channel plane.
    // Plain in-order sums: Eigen's vectorised reductions peel an unaligned head, so their last bits
    // would depend on the plane's address (and colwise().sum() would allocate a temporary).
    const T* plane = x.data() + b * x.rows();
    for (int c = 0; c < c_; ++c, plane += hw_) {
      T s(0);
      for (int i = 0; i < hw_; ++i) s += plane[i];
      y(c, b) = s * inv;
    }
  }
}

template <typename T>
void GlobalAvgPoolT<T>::backward(const CMapT<T>& x, const CMapT<T>&, const CMapT<T>& dy, MapT<T>* dx) {
  if (!dx) return;
  const Index batch = x.cols();
  const T inv = T(1) / static_cast<T>(hw_);
  for (Index b = 0; b < batch; ++b) {
    MapT<T> planes(dx->data() + b * x.rows(), hw_, c_);
    for (int c = 0; c < c_; ++c) planes.col(c).setConstant(dy(c, b) * inv);
  }
}

template <typename T>
void FlattenT<T>::forward(const CMapT<T>& x, MapT<T>& y, bool) {
  y = x;
}

template <typename T>
void FlattenT<T>::backward(const CMapT<T>&, const CMapT<T>&, const CMapT<T>& dy, MapT<T>* dx) {
  if (dx) *dx = dy;
}

template class MaxPool2DT<float>;
template class MaxPool2DT<double>;
template class GlobalAvgPoolT<float>;
template class GlobalAvgPoolT<double>;
template class FlattenT<float>;
template class FlattenT<double>;

}  // namespace fedsilo
