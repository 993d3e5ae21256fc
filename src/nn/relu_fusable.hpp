// A layer that can run together with the ReLU layer that follows it: ModelT::finalize() finds every
// such pair and runs it as one pass (the activation applied while the output is written, the
// pre-activation never stored, dL/dy masked once in backward). Implemented by DenseT and Conv2DT.
#pragma once
#include "nn/layer.hpp"

namespace fedsilo {

template <typename T>
class ReluFusableT {
 public:
  virtual ~ReluFusableT() = default;
  // y = max(0, layer(x)): bit-identical to forward() followed by ReluT::forward().
  virtual void forwardRelu(const CMapT<T>& x, MapT<T>& y) = 0;
  // From the ReLU's output y and dL/dy: the layer's parameter gradients and dL/dx, bit-identical to
  // ReluT::backward() followed by backward(). Needs reserve(batch) first (no allocation then).
  virtual void backwardRelu(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) = 0;
};

}  // namespace fedsilo
