// The bf16 convolution kernels (internal to src/nn): the gather GEMMs of nn/kernel_table.hpp with
// bf16 operands and fp32 accumulation, on AVX512-BF16's VDPBF16PS (acc += a0 b0 + a1 b1 per fp32
// lane, a and b pairs of bf16). kernels_bf16.cpp is compiled with -mavx512bf16 whatever the build
// targets (cmake/kernels.cmake) and is called only where nn/bf16.hpp's bf16Active() holds.
//
// Operands are 32-bit words, each a pair of bf16 values (low half first) along the reduction:
//   gemm:  z[i][c]   = sum over kp in order of dot(x[rowBase[i] + tap[kp]], wt[kp*ldw + c])
//   wgrad: dwt[k][c] (+)= sum over j in order of dot(x[rowBase[j] + tap[k]], dz[j*ldz + c])
// where dot(a, b) = a.lo b.lo + a.hi b.hi. The gemm pairs two input channels (kp = channel pair, kh,
// kw), the weight gradient two output positions (j = a pair of positions); nn/conv2d_bf16.cpp builds
// the planes and tables. C is rounded up to 16 lanes in ldw/ldz, as in the fp32 kernels.
#pragma once
#include <cstdint>

#include "nn/kernel_table.hpp"

namespace fedsilo::kernels {

struct Bf16ConvKernels {
  void (*gemm)(const std::uint32_t* x, const std::int32_t* rowBase, Index n, const std::int32_t* tap, int K,
               const std::uint32_t* wt, int ldw, int C, float* z, int ldz);
  void (*wgrad)(const std::uint32_t* x, const std::int32_t* rowBase, Index n, const std::int32_t* tap, int K,
                const std::uint32_t* dz, int ldz, int C, float* dwt, int ldw, bool accumulate);
  // d[j] = (lo, hi) for j < n: lo = g0[j], hi = g1[j] (0 where g1 is null), each rounded to bf16 (to
  // nearest even; VDPBF16PS reads denormals as 0 however they were rounded) and, where its mask (m0,
  // m1) is not null, replaced by 0 unless the mask value is > 0 (the ReLU's backward rule).
  void (*pairRows)(const float* g0, const float* m0, const float* g1, const float* m1, Index n, std::uint32_t* d);
};

// Callable only on a CPU with AVX-512F and AVX512-BF16 (nn/bf16.hpp: cpuHasBf16).
const Bf16ConvKernels& bf16ConvKernels();

}  // namespace fedsilo::kernels
