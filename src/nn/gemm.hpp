// GEMM with a preallocated packing workspace.
//
// Eigen's `C.noalias() = A * B` allocates its packing buffers (blockA/blockB) on every call once
// they exceed EIGEN_STACK_ALLOCATION_LIMIT (128 KiB), i.e. for every GEMM a CNN layer runs. The
// layer contract is "no allocation after reserve()", so the model-zoo layers call Eigen's GEBP
// driver (internal::general_matrix_matrix_product, the same code `A * B` ends up in) directly with
// a blocking object whose buffers were allocated once in reserve(). With FEDSILO_GEMM=openblas
// Eigen specialises that driver to call sgemm/dgemm, so this path follows the configured backend.
//
// All matrices are column-major with an explicit leading dimension (BLAS conventions).
#pragma once
#include <memory>

#include "nn/layer.hpp"

namespace fedsilo {

enum class GemmOp { N, T };  // use the stored matrix as is, or its transpose

template <typename T>
class GemmWorkspace {
 public:
  GemmWorkspace();
  ~GemmWorkspace();
  GemmWorkspace(const GemmWorkspace&) = delete;
  GemmWorkspace& operator=(const GemmWorkspace&) = delete;
  GemmWorkspace(GemmWorkspace&&) noexcept;
  GemmWorkspace& operator=(GemmWorkspace&&) noexcept;

  // Sizes the packing buffers for products of (at most) m x n x k. A product of another shape
  // still runs without allocating (block sizes are caps), just with blocking tuned for this one.
  void reserve(Index m, Index n, Index k);
  bool reserved() const { return impl_ != nullptr; }

  // C (m x n) = alpha * op(A) * op(B) + beta * C. op(A) is m x k, op(B) is k x n. beta == 0
  // overwrites C (NaNs in C do not propagate).
  void run(GemmOp opA, GemmOp opB, Index m, Index n, Index k, T alpha, const T* a, Index lda, const T* b,
           Index ldb, T beta, T* c, Index ldc);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fedsilo
