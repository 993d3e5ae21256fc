#include "nn/gemm.hpp"

#include <Eigen/Core>

#include "core/error.hpp"

namespace fedsilo {

template <typename T>
struct GemmWorkspace<T>::Impl {
  using Blocking = Eigen::internal::gemm_blocking_space<Eigen::ColMajor, T, T, Eigen::Dynamic, Eigen::Dynamic,
                                                        Eigen::Dynamic>;
  Blocking blocking;
  Impl(Index m, Index n, Index k) : blocking(m, n, k, 1, true) { blocking.allocateAll(); }
};

template <typename T>
GemmWorkspace<T>::GemmWorkspace() = default;
template <typename T>
GemmWorkspace<T>::~GemmWorkspace() = default;
template <typename T>
GemmWorkspace<T>::GemmWorkspace(GemmWorkspace&&) noexcept = default;
template <typename T>
GemmWorkspace<T>& GemmWorkspace<T>::operator=(GemmWorkspace&&) noexcept = default;

template <typename T>
void GemmWorkspace<T>::reserve(Index m, Index n, Index k) {
  impl_ = std::make_unique<Impl>(std::max<Index>(m, 1), std::max<Index>(n, 1), std::max<Index>(k, 1));
}

namespace {

template <typename T, int LhsOrder, int RhsOrder>
void gebp(Index m, Index n, Index k, const T* a, Index lda, const T* b, Index ldb, T* c, Index ldc, T alpha,
          Eigen::internal::level3_blocking<T, T>& blocking) {
  Eigen::internal::general_matrix_matrix_product<Index, T, LhsOrder, false, T, RhsOrder, false, Eigen::ColMajor,
                                                 1>::run(m, n, k, a, lda, b, ldb, c, 1, ldc, alpha, blocking,
                                                         nullptr);
}

}  // namespace

template <typename T>
void GemmWorkspace<T>::run(GemmOp opA, GemmOp opB, Index m, Index n, Index k, T alpha, const T* a, Index lda,
                           const T* b, Index ldb, T beta, T* c, Index ldc) {
  FEDSILO_ASSERT(impl_ != nullptr, "GemmWorkspace::run before reserve()");
  if (m <= 0 || n <= 0) return;
  // The driver accumulates (C += alpha A B): apply beta first.
  Eigen::Map<MatT<T>, 0, Eigen::OuterStride<>> cm(c, m, n, Eigen::OuterStride<>(ldc));
  if (beta == T(0))
    cm.setZero();
  else if (beta != T(1))
    cm *= beta;
  if (k <= 0 || alpha == T(0)) return;
  // A stored column-major and used transposed is the same memory read row-major.
  constexpr int C = Eigen::ColMajor, R = Eigen::RowMajor;
  auto& blk = impl_->blocking;
  if (opA == GemmOp::N && opB == GemmOp::N)
    gebp<T, C, C>(m, n, k, a, lda, b, ldb, c, ldc, alpha, blk);
  else if (opA == GemmOp::N)
    gebp<T, C, R>(m, n, k, a, lda, b, ldb, c, ldc, alpha, blk);
  else if (opB == GemmOp::N)
    gebp<T, R, C>(m, n, k, a, lda, b, ldb, c, ldc, alpha, blk);
  else
    gebp<T, R, R>(m, n, k, a, lda, b, ldb, c, ldc, alpha, blk);
}

template class GemmWorkspace<float>;
template class GemmWorkspace<double>;

}  // namespace fedsilo
