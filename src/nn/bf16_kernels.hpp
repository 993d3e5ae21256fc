// The bf16 kernels (internal to src/nn): the convolutions' gather GEMMs of nn/kernel_table.hpp and
// the dense layer's three products with bf16 operands and fp32 accumulation, on AVX512-BF16's
// VDPBF16PS (acc += a0 b0 + a1 b1 per fp32 lane, a and b pairs of bf16). kernels_bf16.cpp (the
// convolutions) and kernels_bf16_dense.cpp are compiled with -mavx512bf16 whatever the build targets
// (cmake/kernels.cmake) and are called only where nn/bf16.hpp's bf16Active() holds.
//
// Convolutions. Operands are 32-bit words, each a pair of bf16 values (low half first) along the
// reduction:
//   gemm:  z[i][c]   = sum over kp in order of dot(x[rowBase[i] + tap[kp]], wt[kp*ldw + c])
//   wgrad: dwt[k][c] (+)= sum over j in order of dot(x[rowBase[j] + tap[k]], dz[j*ldz + c])
// where dot(a, b) = a.lo b.lo + a.hi b.hi. The gemm pairs two input channels (kp = channel pair, kh,
// kw), or, for a single input channel, two horizontally adjacent taps (kp = kh, kw pair); the weight
// gradient pairs two output positions (j = a pair of positions); nn/conv2d_bf16.cpp builds the planes
// and tables. C is rounded up to 16 lanes in ldw/ldz, as in the fp32 kernels.
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
  // The weight gradient's dL/dz in one pass from the sample planes, for an even P: with
  // g[b][p][c] = src[b*srcStride + c*P + p] (0 where mask, of src's layout, is not null and not > 0),
  // d[(b*P/2 + m)*ldd + c] = (g[b][2m][c], g[b][2m + 1][c]) rounded as pairRows, and db[c] += g[b][p][c]
  // in fp32 over b, then p, in order (as planesToRows, pairRows and a sum over the rows would give).
  void (*planesToPairs)(const float* src, const float* mask, int nb, int C, Index P, Index srcStride,
                        std::uint32_t* d, int ldd, float* db);
  // Rows of pairs of a zero-padded plane in one pass: d[r*cols + j] = (xpad[r][j], xpad[r][j + shift]) for
  // r < h, j < cols, with xpad[r][j] = src[r*w + j - pad] for pad <= j < pad + w, else 0; rounded as pairRows.
  void (*pairShiftedRows)(const float* src, int h, int w, int pad, int shift, int cols, std::uint32_t* d);
};

// Dense layers, in DenseT's layouts (nn/kernel_table.hpp: W row-major N x K, x column-major K x B, y
// and dz column-major N x B). Each product pairs along its own reduction: the forward along k, the
// weight gradient along the batch, the input gradient along the outputs; an odd count pairs its last
// value with 0. The kernels pack the operands into bf16 pairs themselves (rounded to nearest even)
// in `scratch`, of scratchWords(K, N, B) words for batches up to B, and keep nothing between calls.
struct Bf16DenseKernels {
  // y = act(W x + b).
  void (*forward)(const float* w, const float* bias, const float* x, float* y, int K, int N, int B, bool relu,
                  std::uint32_t* scratch);
  // out = dW = dz x^T, or (sgd) out = W updated in place to W - lr dW, rounded once (as DenseKernels::wgradSgd).
  void (*wgrad)(const float* dz, const float* x, float* out, int K, int N, int B, bool sgd, float lr,
                std::uint32_t* scratch);
  // dx = W^T dz (overwrites).
  void (*dgrad)(const float* w, const float* dz, float* dx, int K, int N, int B, std::uint32_t* scratch);
  Index (*scratchWords)(int K, int N, int B);
};

// Callable only on a CPU with AVX-512F and AVX512-BF16 (nn/bf16.hpp: bf16Missing).
const Bf16ConvKernels& bf16ConvKernels();
const Bf16DenseKernels& bf16DenseKernels();

}  // namespace fedsilo::kernels
