// A layer that can run together with the ReLU layer that follows it: ModelT::finalize() finds every
// such pair and runs it as one pass (the activation applied while the output is written, the
// pre-activation never stored, dL/dy masked once in backward). Implemented by DenseT and Conv2DT.
#pragma once
#include <cstdint>

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

// A layer + ReLU pair that can also run together with the 2 x 2, stride-2 max-pool after the ReLU
// (nn/pool.hpp): ModelT::finalize() finds layer, ReLU, pool and, where poolFusable() holds, runs the
// three forward passes as one and the three backward passes as one; the ReLU's output is never stored.
// Implemented by Conv2DT (ConvDirect's path, fp32 and bf16).
template <typename T>
class PoolFusableT {
 public:
  virtual ~PoolFusableT() = default;
  // Whether the fused passes run here (the precision and path chosen when the layer was built).
  virtual bool poolFusable() const = 0;
  // yPool and the window positions pos (one byte per output, nn/pool_kernels.hpp) of pool(max(0,
  // layer(x))): bit-identical to forwardRelu() followed by MaxPool2DT::forward().
  virtual void forwardReluPool(const CMapT<T>& x, MapT<T>& yPool, std::uint8_t* pos) = 0;
  // From the pool's output yPool, dL/dyPool and the window positions of the forward (either forward):
  // bit-identical to the pool's backward, then backwardRelu. Needs reserve(batch) first.
  virtual void backwardReluPool(const CMapT<T>& x, const T* yPool, const T* dyPool, const std::uint8_t* pos,
                                MapT<T>* dx) = 0;
};

}  // namespace fedsilo
