// The avx2 kernel set: AVX2 and FMA. cmake/kernels.cmake compiles this file
// with that instruction set's flags whatever the rest of the build targets; nn/kernels.cpp calls it
// only on a CPU that runs it. Only the kernel templates (internal linkage) and this table are here.
#include "nn/simd_avx2.hpp"
#include "nn/conv_kernels.hpp"
#include "nn/dense_kernels.hpp"
#include "nn/gemm_kernels.hpp"
#include "nn/pool_kernels.hpp"

namespace fedsilo::kernels {

const KernelTable& avx2Kernels() {
  using D = DenseImpl<simd::Avx2>;
  using C = ConvImpl<simd::Avx2>;
  static const KernelTable table{Isa::Avx2,
                                 {D::forward, D::wgrad, D::wgradSgd, D::dgrad, D::reluMask, D::sgd},
                                 {C::gemm, C::wgrad, C::planesToRows, C::rowsToPlanes, C::copyIntoPadded},
                                 {GemmImpl<simd::Avx2>::gemm},
                                 {maxPool2x2Plain<float>, maxPool2x2BackwardPlain<float>}};
  return table;
}

}  // namespace fedsilo::kernels
