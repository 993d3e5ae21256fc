#include "nn/packed_gemm.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <type_traits>

#include "core/error.hpp"
#include "nn/kernel_table.hpp"

namespace fedsilo {

namespace {

// Block caps: a column micro-panel of kKc taps (12 x 256 floats = 12 KiB) stays in L1 while the row
// micro-panels of A's block (kMc x kKc = 128 KiB) stream from L2; B's block (kKc x kNc, 1 MiB) is read
// once per A block, so A is packed once for products of up to kNc columns (the 952 token columns of a
// batch of 8). kMc is a multiple of every set's tile rows (32, 16, 2), kNc of every set's tile columns
// (12, 6, 4).
constexpr Index kMc = 128, kKc = 256, kNc = 1020;

Index roundUp(Index v, Index to) { return (std::max<Index>(v, 1) + to - 1) / to * to; }

}  // namespace

template <typename T>
void PackedGemm<T>::reserve(Index m, Index n, Index k) {
  if constexpr (std::is_same_v<T, float>) {
    mcMax_ = std::min(kMc, roundUp(m, 32));
    kcMax_ = std::min(kKc, std::max<Index>(k, 1));
    ncMax_ = std::min(kNc, roundUp(n, 12));
    packA_.assign(static_cast<std::size_t>(mcMax_ * kcMax_), 0.0f);
    packB_.assign(static_cast<std::size_t>(kcMax_ * ncMax_), 0.0f);
  } else {
    eigen_.reserve(m, n, k);
  }
}

template <typename T>
bool PackedGemm<T>::reserved() const {
  if constexpr (std::is_same_v<T, float>)
    return mcMax_ > 0;
  else
    return eigen_.reserved();
}

template <typename T>
void PackedGemm<T>::run(GemmOp opA, GemmOp opB, Index m, Index n, Index k, T alpha, const T* a, Index lda, const T* b,
                        Index ldb, T beta, T* c, Index ldc) {
  if constexpr (std::is_same_v<T, float>) {
    FEDSILO_ASSERT(mcMax_ > 0, "PackedGemm::run before reserve()");
    if (m <= 0 || n <= 0) return;
    Eigen::Map<MatT<float>, 0, Eigen::OuterStride<>> cm(c, m, n, Eigen::OuterStride<>(ldc));
    const bool product = k > 0 && alpha != 0.0f;
    // beta == 0 with a product: the kernels start the chains from +0 themselves (the bits of zeroing
    // C first), sparing a pass over C that would leave it out of the caches.
    if (beta == 0.0f && !product)
      cm.setZero();
    else if (beta != 0.0f && beta != 1.0f)
      cm *= beta;
    if (!product) return;
    kernels::active().gemm.gemm(opA == GemmOp::T, opB == GemmOp::T, m, n, k, alpha, a, lda, b, ldb, beta == 0.0f, c,
                                ldc, mcMax_, kcMax_, ncMax_, packA_.data(), packB_.data());
  } else {
    eigen_.run(opA, opB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

template class PackedGemm<float>;
template class PackedGemm<double>;

}  // namespace fedsilo
