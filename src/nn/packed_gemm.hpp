// GEMM through fedsilo's own packed kernels (nn/gemm_kernels.hpp) for float, with the interface of
// GemmWorkspace (nn/gemm.hpp): the transformer's products (d = 768: 768-3072 rows and columns, 952
// token columns per batch of 8), where Eigen's GEBP reached about half of the FMA peak. double (the
// finite-difference checks) runs on GemmWorkspace<double>.
//
// Numerics: every C element is one chain of multiply-adds over k in order, started from beta * C
// (alpha is applied to A's elements as they are packed), in every kernel set (the same bits with
// FEDSILO_ISA=avx512, avx2, generic) and whatever the blocking, so an element does not depend on
// the shape or position of the product it is computed in.
#pragma once
#include <memory>

#include "core/types.hpp"
#include "nn/gemm.hpp"

namespace fedsilo {

template <typename T>
class PackedGemm {
 public:
  // Sizes the packing buffers for products of at most m x n x k (larger products still run without
  // allocating, in more blocks).
  void reserve(Index m, Index n, Index k);
  bool reserved() const;

  // C (m x n) = alpha * op(A) * op(B) + beta * C (GemmWorkspace::run); beta == 0 overwrites C.
  void run(GemmOp opA, GemmOp opB, Index m, Index n, Index k, T alpha, const T* a, Index lda, const T* b, Index ldb,
           T beta, T* c, Index ldc);

 private:
  GemmWorkspace<T> eigen_;  // double only
  AlignedVector<float> packA_, packB_;
  Index mcMax_ = 0, kcMax_ = 0, ncMax_ = 0;
};

}  // namespace fedsilo
