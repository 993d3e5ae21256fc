// The packed GEMM of the transformer's products (nn/packed_gemm.hpp), written once over SIMD traits S
// and instantiated by each kernels_<set>.cpp (see dense_kernels.hpp for why everything here has
// internal linkage).
//
// C (m x n, column-major, ldc) = op(A) op(B) + C, k deep, in blocks: kc taps of op(B) for nc columns
// are copied into micro-panels of kGemmCols columns (tap-major), kc taps of op(A) for mc rows into
// micro-panels of 2 vectors of rows, so that the tile (2 vectors of rows x kGemmCols columns, all in
// registers) reads both operands sequentially from L1/L2 whatever the operands' order and strides.
// Every C element is one chain of multiply-adds over k in order, started from C itself (the caller
// applies beta first) or, with overwrite, from +0 without reading C (what beta = 0 would have set it
// to, without a pass over C that evicts it from the caches): the blocking and the instruction set
// change nothing in the bits. Panels are
// zero-padded to whole tiles; the padded rows and columns are computed and never stored.
#pragma once
#include "nn/dense_kernels.hpp"

namespace fedsilo::kernels {
namespace {

template <class S>
struct GemmImpl {
  using V = typename S::V;
  static constexpr int L = S::kLanes;
  static constexpr int kMr = 2 * L;         // tile rows: two vectors
  static constexpr int kNr = S::kGemmCols;  // tile columns: one broadcast each

  // Ap[p * kMr + r] = alpha * op(A)(i0 + r, p0 + p), zero beyond m; for mc rows in tiles of kMr. Each
  // stored row or column of A is read contiguously: a transposed A's rows (op(A)'s rows) in L x L
  // blocks turned by in-register transposes, so that the panel is written a vector at a time.
  static void packA(bool transA, const float* a, Index lda, Index i0, Index mc, Index m, Index p0, Index kc,
                    float alpha, float* ap) {
    for (Index t = 0; t < mc; t += kMr, ap += kc * kMr) {
      const Index rows = iminl(kMr, m - i0 - t);
      if (transA) {
        for (Index h = 0; h < kMr; h += L) packTransposed(a + p0 + (i0 + t + h) * lda, lda, rows - h, kc, ap + h, kMr);
        if (alpha != 1.0f)
          for (Index e = 0; e < kc * kMr; ++e) ap[e] *= alpha;  // padded rows too: never stored
        continue;
      }
      for (Index p = 0; p < kc; ++p) {
        const float* col = a + i0 + t + (p0 + p) * lda;
        for (Index r = 0; r < rows; ++r) ap[p * kMr + r] = alpha * col[r];
      }
      for (Index r = rows; r < kMr; ++r)
        for (Index p = 0; p < kc; ++p) ap[p * kMr + r] = 0.0f;
    }
  }

  // dst[p * ldd + i] = src[i * lds + p] for i < width (0 for i >= count) and p < len: up to L rows of len
  // values read contiguously, turned L x L at a time in registers (a copy: the values keep their bits).
  static void packTransposed(const float* src, Index lds, Index count, Index len, float* dst, Index ldd,
                             Index width = L) {
    const auto mw = S::mask(width);
    V r[L];
    for (Index p = 0; p < len; p += L) {
      const Index n = iminl(L, len - p);
      const auto mn = S::mask(n);
      for (int i = 0; i < L; ++i) r[i] = i < count ? S::load(mn, src + i * lds + p) : S::zero();
      S::transpose(r);
      for (Index j = 0; j < n; ++j) S::store(dst + (p + j) * ldd, mw, r[j]);
    }
  }

  // Bp[p * kNr + c] = op(B)(p0 + p, j0 + c), zero beyond n; for nc columns in tiles of kNr, reading B's
  // stored rows or columns contiguously.
  static void packB(bool transB, const float* b, Index ldb, Index j0, Index nc, Index n, Index p0, Index kc,
                    float* bp) {
    for (Index t = 0; t < nc; t += kNr, bp += kc * kNr) {
      const Index cols = iminl(kNr, n - j0 - t);
      if (transB) {
        for (Index p = 0; p < kc; ++p) {
          const float* row = b + j0 + t + (p0 + p) * ldb;
          for (Index c = 0; c < cols; ++c) bp[p * kNr + c] = row[c];
        }
        for (Index c = cols; c < kNr; ++c)
          for (Index p = 0; p < kc; ++p) bp[p * kNr + c] = 0.0f;
      } else {
        for (Index c = 0; c < kNr; c += L)
          packTransposed(b + p0 + (j0 + t + c) * ldb, ldb, cols - c, kc, bp + c, kNr, iminl(L, kNr - c));
      }
    }
  }

  // The tile C(i0.., j0..) (rows x cols of it stored) += Ap Bp over kc taps, continuing C's chains, or
  // = Ap Bp (chains started from +0) with fromZero. The next tile's C columns (cNext, or nullptr) are
  // prefetched meanwhile: C is larger than L2, and a tile that starts on missing columns waits for them
  // before its first multiply-add (a prefetch past C's end, for padded rows or columns, never faults).
  static void tile(const float* ap, const float* bp, Index kc, float* c, Index ldc, Index rows, Index cols,
                   bool fromZero, const float* cNext) {
    V acc[kNr][2];
    const auto m0 = S::mask(rows), m1 = S::mask(rows - L);
#pragma GCC unroll 16
    for (int j = 0; j < kNr; ++j) {
      const Index jj = j < cols ? j : 0;  // columns beyond n start from (and are never stored to) column 0
      acc[j][0] = fromZero ? S::zero() : S::load(m0, c + jj * ldc);
      acc[j][1] = fromZero ? S::zero() : S::load(m1, c + jj * ldc + L);
    }
    if (cNext)
      for (int j = 0; j < kNr; ++j) {
        __builtin_prefetch(cNext + j * ldc, 1);
        __builtin_prefetch(cNext + j * ldc + kMr - 1, 1);
      }
    for (Index p = 0; p < kc; ++p, ap += kMr, bp += kNr) {
      const V a0 = S::pin(S::load(ap)), a1 = S::pin(S::load(ap + L));
#pragma GCC unroll 16
      for (int j = 0; j < kNr; ++j) {
        const V bj = S::bcast(bp + j);
        acc[j][0] = S::fma(a0, bj, acc[j][0]);
        acc[j][1] = S::fma(a1, bj, acc[j][1]);
      }
    }
#pragma GCC unroll 16
    for (int j = 0; j < kNr; ++j) {
      if (j >= cols) break;
      S::store(c + j * ldc, m0, acc[j][0]);
      S::store(c + j * ldc + L, m1, acc[j][1]);
    }
  }

  // C += alpha op(A) op(B) (C = with overwrite) with blocks of at most mcMax x kcMax (A) and kcMax x ncMax
  // (B); ap and bp hold mcMax x kcMax and kcMax x ncMax floats (mcMax a multiple of 32, ncMax of 12: every set's tile).
  static void gemm(bool transA, bool transB, Index m, Index n, Index k, float alpha, const float* a, Index lda,
                   const float* b, Index ldb, bool overwrite, float* c, Index ldc, Index mcMax, Index kcMax,
                   Index ncMax, float* ap, float* bp) {
    for (Index j0 = 0; j0 < n; j0 += ncMax) {
      const Index nc = iminl(ncMax, n - j0);
      for (Index p0 = 0; p0 < k; p0 += kcMax) {
        const Index kc = iminl(kcMax, k - p0);
        packB(transB, b, ldb, j0, nc, n, p0, kc, bp);
        for (Index i0 = 0; i0 < m; i0 += mcMax) {
          const Index mc = iminl(mcMax, m - i0);
          packA(transA, a, lda, i0, mc, m, p0, kc, alpha, ap);
          for (Index jt = 0; jt < nc; jt += kNr)
            for (Index it = 0; it < mc; it += kMr) {
              const float* next = it + kMr < mc   ? c + (i0 + it + kMr) + (j0 + jt) * ldc
                                  : jt + kNr < nc ? c + i0 + (j0 + jt + kNr) * ldc
                                                  : nullptr;
              tile(ap + it * kc, bp + jt * kc, kc, c + (i0 + it) + (j0 + jt) * ldc, ldc, iminl(kMr, mc - it),
                   iminl(kNr, nc - jt), overwrite && p0 == 0, overwrite && p0 == 0 ? nullptr : next);
            }
        }
      }
    }
  }
};

}  // namespace
}  // namespace fedsilo::kernels
