// The generic kernel set: baseline x86-64 (no vector extension assumed; multiply-adds through fmaf). cmake/kernels.cmake compiles this file
// with that instruction set's flags whatever the rest of the build targets; nn/kernels.cpp calls it
// only on a CPU that runs it. Only the kernel templates (internal linkage) and this table are here.
#include "nn/simd_scalar.hpp"
#include "nn/conv_kernels.hpp"
#include "nn/dense_kernels.hpp"
#include "nn/gemm_kernels.hpp"
#include "nn/pool_kernels.hpp"

namespace fedsilo::kernels {

const KernelTable& genericKernels() {
  using D = DenseImpl<simd::Scalar>;
  using C = ConvImpl<simd::Scalar>;
  static const KernelTable table{Isa::Generic,
                                 {D::forward, D::wgrad, D::wgradSgd, D::dgrad, D::reluMask, D::sgd},
                                 {C::gemm, C::wgrad, C::planesToRows, C::rowsToPlanes, C::copyIntoPadded},
                                 {GemmImpl<simd::Scalar>::gemm},
                                 {maxPool2x2Plain<float>, maxPool2x2BackwardPlain<float>}};
  return table;
}

}  // namespace fedsilo::kernels
