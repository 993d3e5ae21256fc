// The avx512 kernel set: AVX-512 (F, BW, DQ, VL) and FMA. cmake/kernels.cmake compiles this file
// with that instruction set's flags whatever the rest of the build targets; nn/kernels.cpp calls it
// only on a CPU that runs it. Only the kernel templates (internal linkage) and this table are here.
#include "nn/simd_avx512.hpp"
#include "nn/conv_kernels.hpp"
#include "nn/dense_kernels.hpp"
#include "nn/gemm_kernels.hpp"
#include "nn/pool_kernels_avx512.hpp"

namespace fedsilo::kernels {

const KernelTable& avx512Kernels() {
  using D = DenseImpl<simd::Avx512>;
  using C = ConvImpl<simd::Avx512>;
  static const KernelTable table{Isa::Avx512,
                                 {D::forward, D::wgrad, D::wgradSgd, D::dgrad, D::reluMask, D::sgd},
                                 {C::gemm, C::wgrad, C::planesToRows, C::rowsToPlanes, C::copyIntoPadded},
                                 {GemmImpl<simd::Avx512>::gemm},
                                 {PoolAvx512::forward, PoolAvx512::backward}};
  return table;
}

}  // namespace fedsilo::kernels
