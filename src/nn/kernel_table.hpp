// The function-pointer table of one kernel set (internal to src/nn). kernels_<set>.cpp fills one
// table each from the templates of dense_kernels.hpp and conv_kernels.hpp instantiated with that
// set's SIMD traits; kernels.cpp picks the active one (nn/kernels.hpp).
//
// Layouts. Dense: W row-major out x in (w[o*K + k]), x column-major in x batch (x[b*K + k]), y and
// dL/dy column-major out x batch. Convolution, "gather GEMM": an input image is read through two
// offset tables, rowBase (one entry per output position of the chunk: where its receptive field
// starts in the padded input) and tap (one per weight column k = (c_in, kh, kw): the offset of that
// tap from the row base), so that P[i][k] = x[rowBase[i] + tap[k]] is the im2col matrix without
// ever being stored. Output rows are "channels last": z[i*ldz + c].
#pragma once
#include <cstdint>

#include "nn/isa.hpp"

// No project header with inline code (Eigen, the standard library's strings) is included here: this
// header is compiled into each instruction set's translation unit.
namespace fedsilo {
using Index = std::int64_t;  // as core/types.hpp
}

namespace fedsilo::kernels {

struct DenseKernels {
  // y = act(W x + b); xt: scratch of in x 32 floats.
  void (*forward)(const float* w, const float* bias, const float* x, float* y, int K, int N, int B, bool relu,
                  float* xt);
  // dW = dz x^T (overwrites).
  void (*wgrad)(const float* dz, const float* x, float* dw, int K, int N, int B);
  // W -= lr * (dz x^T) in place, without storing dW (the plain-SGD step fused into the weight gradient;
  // the same rounding as Sgd::step's p - lr * g with one fused multiply-add).
  void (*wgradSgd)(const float* dz, const float* x, float* w, int K, int N, int B, float lr);
  // dx = W^T dz (overwrites).
  void (*dgrad)(const float* w, const float* dz, float* dx, int K, int N, int B);
  // dz = y > 0 ? dy : 0 over n values.
  void (*reluMask)(const float* y, const float* dy, float* dz, Index n);
  // p -= lr * g over n values, rounded once (the SGD step of parameters without a fused update).
  void (*sgd)(float* p, const float* g, Index n, float lr);
};

// Where each tap of a convolution's weight gradient reads inside the image (ConvKernels::wgrad).
struct TapWindows {
  const std::int16_t* rect;
  int outRows, outCols;
};

struct ConvKernels {
  // z[i][c] = sum over k in order of x[rowBase[i] + tap[k]] * wt[k*ldw + c], for i < n, c < C
  // (overwrites z; row stride ldz). span (or nullptr): for each position i, the kernel rows
  // [span[4i], span[4i + 1]) and kernel columns [span[4i + 2], span[4i + 3]) it reads inside the image;
  // with it, the taps k = (channel, kernel row, kernel column) of a ks x ks kernel outside them read zero
  // padding and may be left out.
  void (*gemm)(const float* x, const std::int32_t* rowBase, Index n, const std::int32_t* tap, int K, const float* wt,
               int ldw, int C, float* z, int ldz, const std::uint8_t* span, int ks);
  // dwt[k*ldw + c] (+)= sum over i in order of x[rowBase[i] + tap[k]] * dz[i*ldz + c]; accumulate = false
  // starts from zero. windows (or nullptr): the positions i are samples of outRows x outCols in order, and
  // tap k reads inside the image only at output rows [rect[4k], rect[4k + 1]) and columns [rect[4k + 2],
  // rect[4k + 3]); the other positions read zero padding and may be left out.
  void (*wgrad)(const float* x, const std::int32_t* rowBase, Index n, const std::int32_t* tap, int K, const float* dz,
                int ldz, int C, float* dwt, int ldw, bool accumulate, const TapWindows* windows);
  // dst[(b*P + p)*ldd + c] = src[b*srcStride + c*P + p], masked to 0 where mask (same layout as src)
  // is not > 0 when mask != nullptr (the ReLU's backward rule); b < nb, c < C, p < P.
  void (*planesToRows)(const float* src, const float* mask, int nb, int C, Index P, Index srcStride, float* dst,
                       int ldd);
  // dst[b*dstStride + c*P + p] = act(src[(b*P + rowOf[p])*lds + c] + bias[c]) (bias may be null: + 0 skipped;
  // rowOf may be null: rowOf[p] = p).
  void (*rowsToPlanes)(const float* src, int lds, const float* bias, bool relu, int nb, int C, Index P, float* dst,
                       Index dstStride, const std::int32_t* rowOf);
  // dst[p*dstPlane + r*ldd + j] = src[(p*rows + r)*cols + j], masked to 0 where mask (same layout as src)
  // is not > 0 when mask != nullptr; p < planes, r < rows, j < cols (the interior of zero-padded planes).
  void (*copyIntoPadded)(const float* src, const float* mask, Index planes, int rows, int cols, float* dst,
                         Index dstPlane, int ldd);
};

// The packed GEMM (nn/gemm_kernels.hpp, nn/packed_gemm.hpp): C (m x n, column-major) += alpha op(A) op(B)
// (or = with overwrite: C is then neither read nor zeroed first), every element one chain over k in order
// from its value in C (from +0 with overwrite); ap and bp are packing buffers of
// mcMax x kcMax and kcMax x ncMax floats (mcMax a multiple of 32, ncMax of 12).
struct GemmKernels {
  void (*gemm)(bool transA, bool transB, Index m, Index n, Index k, float alpha, const float* a, Index lda,
               const float* b, Index ldb, bool overwrite, float* c, Index ldc, Index mcMax, Index kcMax, Index ncMax,
               float* ap, float* bp);
};
// Max pooling over 2 x 2 windows with stride 2 (nn/pool_kernels.hpp: layout, positions, rules).
struct PoolKernels {
  // y and pos (the position of each maximum in its window, 0..3) of `planes` planes of h x w.
  void (*maxPool2x2)(const float* x, Index planes, int h, int w, float* y, std::uint8_t* pos);
  // dx (every value overwritten) from dL/dy and the positions.
  void (*maxPool2x2Backward)(const float* dy, const std::uint8_t* pos, Index planes, int h, int w, float* dx);
};

struct KernelTable {
  Isa isa;
  DenseKernels dense;
  ConvKernels conv;
  GemmKernels gemm;
  PoolKernels pool;
};

const KernelTable& avx512Kernels();
const KernelTable& avx2Kernels();
const KernelTable& genericKernels();
// The active set (nn/kernels.hpp: selectIsa).
const KernelTable& active();

}  // namespace fedsilo::kernels
