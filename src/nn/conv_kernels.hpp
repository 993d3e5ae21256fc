// The convolution kernels of Conv2DT's float path (nn/conv2d_direct.*), written once over SIMD traits
// S and instantiated by each kernels_<set>.cpp (see dense_kernels.hpp for why everything here has
// internal linkage).
//
// "Gather GEMM" (kernel_table.hpp): the im2col matrix P[i][k] = x[rowBase[i] + tap[k]] is read
// straight from the zero-padded input instead of being stored. Both products are vectorised along
// the output channels (every preset has a multiple of 16), with the pixels broadcast:
//   gemm:  z[i][c]   = sum over k in order of P[i][k] * wt[k][c]   (tile: R positions x V channel vectors)
//   wgrad: dwt[k][c] = sum over i in order of P[i][k] * dz[i][c]   (tile: R taps x V channel vectors)
// so that every output element is one chain of multiply-adds in a fixed order, the same in every set
// (gemm may leave out taps that read only zero padding for a whole tile: +-0 terms, see gemmTile).
// The weight and output rows have a stride that is a multiple of the vector width, with zero padding
// beyond C: full vectors are loaded and stored, and the padded channels are scratch.
#pragma once
#include "nn/dense_kernels.hpp"
#include "nn/prefetch.hpp"

namespace fedsilo::kernels {
namespace {

template <class S>
struct ConvImpl {
  using V = typename S::V;
  using M = typename S::M;
  static constexpr int L = S::kLanes;
  static constexpr int kR = S::kConvRows;
  static constexpr int kV = S::kConvVecs;
  // Taps per pass over the positions of a chunk: kBlockK x (V x L) weights stay in L1 while the
  // positions stream (128 x 64 floats = 32 KiB with AVX-512).
  static constexpr int kBlockK = 128;

  // acc[r][v] += x[rowBase(r) + tap[k]] * wt[k][c0 + L v] for the taps k in [a, b), in order.
  template <int V_, int R_>
  __attribute__((always_inline)) static inline void gemmTaps(V (&acc)[R_ * V_], const float* const (&xr)[R_],
                                                             const std::int32_t* tap, int a, int b, const float* wt,
                                                             int ldw, int c0) {
    const float* wk = wt + static_cast<Index>(a) * ldw + c0;
    for (int k = a; k < b; ++k, wk += ldw) {
      const Index o = tap[k];
      V wv[V_];
#pragma GCC unroll 4
      for (int v = 0; v < V_; ++v) wv[v] = S::pin(S::load(wk + L * v));
#pragma GCC unroll 8
      for (int r = 0; r < R_; ++r) {
        const V d = S::bcast(xr[r] + o);
#pragma GCC unroll 4
        for (int v = 0; v < V_; ++v) acc[r * V_ + v] = S::fma(d, wv[v], acc[r * V_ + v]);
      }
    }
  }

  // The taps [k0, k1) of kernel rows [lo, hi) and kernel columns [cl, ch) of a ks x ks kernel (taps run over
  // (channel, kernel row, kernel column)), in order: per channel one run of rows, or with a column span one run
  // per kernel row.
  template <int V_, int R_>
  __attribute__((always_inline)) static inline void gemmSpanTaps(V (&acc)[R_ * V_], const float* const (&xr)[R_],
                                                                 const std::int32_t* tap, int k0, int k1,
                                                                 const float* wt, int ldw, int c0, int ks, int lo,
                                                                 int hi, int cl, int ch) {
    const int kk = ks * ks;
    for (int c = k0 / kk * kk; c < k1; c += kk) {
      if (cl == 0 && ch == ks) {
        const int a = imax(k0, c + lo * ks), b = imin(k1, c + hi * ks);
        if (a < b) gemmTaps<V_, R_>(acc, xr, tap, a, b, wt, ldw, c0);
        continue;
      }
      for (int r = lo; r < hi; ++r) {
        const int a = imax(k0, c + r * ks + cl), b = imin(k1, c + r * ks + ch);
        if (a < b) gemmTaps<V_, R_>(acc, xr, tap, a, b, wt, ldw, c0);
      }
    }
  }

  // A tile of R_ positions (rows of z) x V_ vectors of channels, over the taps [k0, k1). With span, the
  // taps of the kernel rows and columns that no position of the tile reads inside the image (all zero
  // padding) are left out: their products are +-0, which leave a sum that started at +0 unchanged (it is
  // never -0 in round-to-nearest), so the results are the same bits for finite operands.
  template <int V_, int R_>
  static void gemmTile(const float* x, const std::int32_t* rowBase, Index i0, const std::int32_t* tap, int k0, int k1,
                       const float* wt, int ldw, int c0, float* z, int ldz, const std::uint8_t* span, int ks) {
    V acc[R_ * V_];
    if (k0 == 0) {
#pragma GCC unroll 32
      for (int a = 0; a < R_ * V_; ++a) acc[a] = S::zero();
    } else {  // continue the chains of the previous block of taps
#pragma GCC unroll 8
      for (int r = 0; r < R_; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < V_; ++v) acc[r * V_ + v] = S::load(z + (i0 + r) * ldz + c0 + L * v);
    }
    const float* xr[R_];
#pragma GCC unroll 8
    for (int r = 0; r < R_; ++r) xr[r] = x + rowBase[i0 + r];
    int lo = 0, hi = ks, cl = 0, ch = ks;  // the kernel rows and columns some position of the tile reads inside
    if (span) {
      lo = cl = ks, hi = ch = 0;
      for (int r = 0; r < R_; ++r) {
        const std::uint8_t* s = span + 4 * (i0 + r);
        lo = imin(lo, s[0]), hi = imax(hi, s[1]), cl = imin(cl, s[2]), ch = imax(ch, s[3]);
      }
    }
    if (lo == 0 && hi == ks && cl == 0 && ch == ks)
      gemmTaps<V_, R_>(acc, xr, tap, k0, k1, wt, ldw, c0);
    else
      gemmSpanTaps<V_, R_>(acc, xr, tap, k0, k1, wt, ldw, c0, ks, lo, hi, cl, ch);
#pragma GCC unroll 8
    for (int r = 0; r < R_; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < V_; ++v) S::store(z + (i0 + r) * ldz + c0 + L * v, acc[r * V_ + v]);
  }

  // The positions of a chunk in tiles of kR, the last tile exactly as tall as what is left (a tile padded
  // to kR rows would spend its multiply-adds on copies: 4% of PFL conv3's 98-position chunks).
  static void gemm(const float* x, const std::int32_t* rowBase, Index n, const std::int32_t* tap, int K,
                   const float* wt, int ldw, int C, float* z, int ldz, const std::uint8_t* span, int ks) {
    const int cvecs = (C + L - 1) / L;
    for (int cv = 0; cv < cvecs; cv += kV) {
      const int nv = imin(kV, cvecs - cv);
      for (int k0 = 0; k0 < K; k0 += kBlockK) {
        const int k1 = imin(K, k0 + kBlockK);
        withCount<kV>(nv, [&](auto v) {
          constexpr int kVecs = decltype(v)::value;
          Index i0 = 0;
          for (; i0 + kR <= n; i0 += kR)
            gemmTile<kVecs, kR>(x, rowBase, i0, tap, k0, k1, wt, ldw, cv * L, z, ldz, span, ks);
          if (i0 < n)
            withCount<kR>(static_cast<int>(n - i0), [&](auto r) {
              gemmTile<kVecs, decltype(r)::value>(x, rowBase, i0, tap, k0, k1, wt, ldw, cv * L, z, ldz, span, ks);
            });
        });
      }
    }
  }

  // acc[j][v] += x[rowBase[i] + t[j]] * dz[i][c0 + L v] for the positions i in [i0, i1), in order.
  template <int V_, int R_>
  __attribute__((always_inline)) static inline void wgradPositions(V (&acc)[R_ * V_], const float* x,
                                                                   const std::int32_t* rowBase, const Index (&t)[R_],
                                                                   Index i0, Index i1, const float* dz, int ldz,
                                                                   int c0) {
    const float* dzi = dz + i0 * ldz + c0;
    for (Index i = i0; i < i1; ++i, dzi += ldz) {
      const float* xb = x + rowBase[i];
      V zv[V_];
#pragma GCC unroll 4
      for (int v = 0; v < V_; ++v) zv[v] = S::pin(S::load(dzi + L * v));
#pragma GCC unroll 8
      for (int j = 0; j < R_; ++j) {
        const V d = S::bcast(xb + t[j]);
#pragma GCC unroll 4
        for (int v = 0; v < V_; ++v) acc[j * V_ + v] = S::fma(d, zv[v], acc[j * V_ + v]);
      }
    }
  }

  // The positions some tap of [k0, k0 + R_) reads inside the image: per sample, the output rows and columns of
  // the union of the taps' windows, as one run per row (or one run of whole rows). The positions left out
  // read zero padding for every tap of the tile: their products are +-0, and a sum that is never -0 keeps
  // its bits without them.
  template <int V_, int R_>
  static inline void wgradWindows(V (&acc)[R_ * V_], const float* x, const std::int32_t* rowBase, Index n,
                                  const Index (&t)[R_], int k0, const float* dz, int ldz, int c0, const TapWindows& w) {
    int r0 = w.outRows, r1 = 0, q0 = w.outCols, q1 = 0;
    for (int j = 0; j < R_; ++j) {
      const std::int16_t* q = w.rect + 4 * (k0 + j);
      r0 = imin(r0, q[0]), r1 = imax(r1, q[1]), q0 = imin(q0, q[2]), q1 = imax(q1, q[3]);
    }
    const Index P = Index(w.outRows) * w.outCols;
    for (Index b = 0; b < n; b += P) {
      if (q0 == 0 && q1 == w.outCols) {
        if (r0 < r1)
          wgradPositions<V_, R_>(acc, x, rowBase, t, b + Index(r0) * w.outCols, b + Index(r1) * w.outCols, dz, ldz, c0);
        continue;
      }
      for (int r = r0; r < r1 && q0 < q1; ++r)
        wgradPositions<V_, R_>(acc, x, rowBase, t, b + Index(r) * w.outCols + q0, b + Index(r) * w.outCols + q1, dz,
                               ldz, c0);
    }
  }

  // A tile of R_ taps (rows of dwt) x V_ vectors of channels, over all n positions (or with windows those
  // some tap reads inside the image). The nextRows rows of dwt from k0 + R_ on (the next tile's) are requested
  // into L1 once this tile's are loaded: dwt (3.5 MB for PFL's conv3) is read back from L3 chunk after chunk,
  // and a tile's first loads waited for it (11% of the weight gradient's samples in perf, on the loads before
  // the loop; docs/performance.md).
  template <int V_, int R_>
  static void wgradTile(const float* x, const std::int32_t* rowBase, Index n, const std::int32_t* tap, int k0,
                        const float* dz, int ldz, int c0, float* dwt, int ldw, bool accumulate, int nextRows,
                        const TapWindows* windows) {
    V acc[R_ * V_];
    if (accumulate) {
#pragma GCC unroll 8
      for (int j = 0; j < R_; ++j)
#pragma GCC unroll 4
        for (int v = 0; v < V_; ++v) acc[j * V_ + v] = S::load(dwt + static_cast<Index>(k0 + j) * ldw + c0 + L * v);
      for (int j = 0; j < nextRows; ++j) prefetchSpan<false>(dwt + static_cast<Index>(k0 + R_ + j) * ldw + c0, V_ * L);
    } else {
#pragma GCC unroll 32
      for (int a = 0; a < R_ * V_; ++a) acc[a] = S::zero();
    }
    Index t[R_];
#pragma GCC unroll 8
    for (int j = 0; j < R_; ++j) t[j] = tap[k0 + j];
    if (windows)
      wgradWindows<V_, R_>(acc, x, rowBase, n, t, k0, dz, ldz, c0, *windows);
    else
      wgradPositions<V_, R_>(acc, x, rowBase, t, 0, n, dz, ldz, c0);
#pragma GCC unroll 8
    for (int j = 0; j < R_; ++j)
#pragma GCC unroll 4
      for (int v = 0; v < V_; ++v) S::store(dwt + static_cast<Index>(k0 + j) * ldw + c0 + L * v, acc[j * V_ + v]);
  }

  // The taps in tiles of kR, the last one exactly as tall as what is left (conv1's 25 taps: 4 x 6 + 1).
  static void wgrad(const float* x, const std::int32_t* rowBase, Index n, const std::int32_t* tap, int K,
                    const float* dz, int ldz, int C, float* dwt, int ldw, bool accumulate, const TapWindows* windows) {
    const int cvecs = (C + L - 1) / L;
    for (int cv = 0; cv < cvecs; cv += kV) {
      const int nv = imin(kV, cvecs - cv);
      withCount<kV>(nv, [&](auto v) {
        constexpr int kVecs = decltype(v)::value;
        int k0 = 0;
        for (; k0 + kR <= K; k0 += kR)
          wgradTile<kVecs, kR>(x, rowBase, n, tap, k0, dz, ldz, cv * L, dwt, ldw, accumulate, imin(kR, K - k0 - kR),
                               windows);
        if (k0 < K)
          withCount<kR>(K - k0, [&](auto r) {
            wgradTile<kVecs, decltype(r)::value>(x, rowBase, n, tap, k0, dz, ldz, cv * L, dwt, ldw, accumulate, 0,
                                                 windows);
          });
      });
    }
  }

  // dst[p*dstPlane + r*ldd + j] = src[(p*rows + r)*cols + j] (masked by mask > 0, the same layout as src),
  // p < planes, r < rows, j < cols: planes copied into the interior of zero-padded ones, a row at a time in
  // masked vectors (7- and 14-wide rows: a scalar loop or a memcpy call per row cost 2.5% of a PFL step).
  static void copyIntoPadded(const float* src, const float* mask, Index planes, int rows, int cols, float* dst,
                             Index dstPlane, int ldd) {
    for (Index p = 0; p < planes; ++p)
      for (int r = 0; r < rows; ++r) {
        const Index from = (p * rows + r) * cols;
        float* d = dst + p * dstPlane + static_cast<Index>(r) * ldd;
        for (int j0 = 0; j0 < cols; j0 += L) {
          const M m = S::mask(cols - j0);
          V v = S::load(m, src + from + j0);
          if (mask) v = S::selectPositive(S::load(m, mask + from + j0), v);
          S::store(d + j0, m, v);
        }
      }
  }

  // dst[(b*P + p)*ldd + c] = src[b*srcStride + c*P + p] (masked by mask > 0), by L x L transposes.
  static void planesToRows(const float* src, const float* mask, int nb, int C, Index P, Index srcStride, float* dst,
                           int ldd) {
    for (int b = 0; b < nb; ++b) {
      const float* sb = src + b * srcStride;
      const float* mb = mask ? mask + b * srcStride : nullptr;
      float* db = dst + b * P * ldd;
      for (int c0 = 0; c0 < C; c0 += L) {
        const int nc = imin(L, C - c0);
        for (Index p0 = 0; p0 < P; p0 += L) {
          const int np = static_cast<int>(iminl(L, P - p0));
          const M pm = S::mask(np), cm = S::mask(nc);
          V r[L];
#pragma GCC unroll 16
          for (int i = 0; i < L; ++i) {
            if (i >= nc) {
              r[i] = S::zero();
              continue;
            }
            const Index off = (c0 + i) * P + p0;
            r[i] = S::load(pm, sb + off);
            if (mb) r[i] = S::selectPositive(S::load(pm, mb + off), r[i]);
          }
          S::transpose(r);
#pragma GCC unroll 16
          for (int j = 0; j < L; ++j)
            if (j < np) S::store(db + (p0 + j) * ldd + c0, cm, r[j]);
        }
      }
    }
  }

  // dst[b*dstStride + c*P + p] = act(src[(b*P + rowOf[p])*lds + c] + bias[c]) (rowOf null: p).
  static void rowsToPlanes(const float* src, int lds, const float* bias, bool relu, int nb, int C, Index P, float* dst,
                           Index dstStride, const std::int32_t* rowOf) {
    for (int b = 0; b < nb; ++b) {
      const float* sb = src + b * P * lds;
      float* db = dst + b * dstStride;
      for (int c0 = 0; c0 < C; c0 += L) {
        const int nc = imin(L, C - c0);
        const M cm = S::mask(nc);
        const V bv = bias ? S::load(cm, bias + c0) : S::zero();
        for (Index p0 = 0; p0 < P; p0 += L) {
          const int np = static_cast<int>(iminl(L, P - p0));
          V r[L];
#pragma GCC unroll 16
          for (int i = 0; i < L; ++i) {
            if (i >= np) {
              r[i] = S::zero();
              continue;
            }
            V v = S::load(cm, sb + (rowOf ? Index(rowOf[p0 + i]) : p0 + i) * lds + c0);
            if (bias) v = S::add(v, bv);
            r[i] = relu ? S::max0(v) : v;
          }
          S::transpose(r);
          const M pm = S::mask(np);
#pragma GCC unroll 16
          for (int j = 0; j < L; ++j)
            if (j < nc) S::store(db + (c0 + j) * P + p0, pm, r[j]);
        }
      }
    }
  }
};

}  // namespace
}  // namespace fedsilo::kernels
