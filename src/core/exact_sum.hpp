// Order-independent exact summation of doubles.
//
// Aggregation must give bit-identical results at 1, 2 or 4 ranks, but a floating-point sum
// depends on the order of its terms, and MPI_Reduce's order depends on the rank count. Each term is
// therefore quantised once, deterministically, to a 128-bit fixed-point number (64 integer bits,
// 64 fraction bits: resolution 5.4e-20, range +-9.2e18), and fixed-point addition is exact and
// associative. The only rounding is the per-term truncation, which does not depend on the order.
//
// addScaled, the FedAvg accumulate (one call per client and parameter block), has an AVX-512
// version that does the same IEEE operations lane by lane (w*x in double, floor, the scaled
// fraction, truncating conversions, carry), so both paths give bit-identical accumulators; see
// docs/performance.md for its speed.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>
#define FEDSILO_EXACT_SUM_AVX512 1
#endif

namespace fedsilo {

struct Fixed128 {
  std::int64_t hi = 0;   // integer part (floor)
  std::uint64_t lo = 0;  // fraction * 2^64

  // 2^64 (the literal 18446744073709551615.0 rounds to it).
  static constexpr double kTwo64 = 18446744073709551616.0;

  // x = hi + lo / 2^64 with hi = floor(x), lo = the fraction truncated to 64 bits. (x - floor(x))
  // * 2^64 is exact (a power-of-two scaling, as ldexp). When x is a tiny negative number, x - floor(x)
  // rounds up to 1.0 and the fraction saturates at 2^64 - 1 (what AVX-512's unsigned conversion
  // returns; the saturation is explicit so that builds without AVX-512 agree).
  static Fixed128 fromDouble(double x) {
    Fixed128 f;
    const double fl = std::floor(x);
    f.hi = static_cast<std::int64_t>(fl);
    const double t = (x - fl) * kTwo64;
    f.lo = t >= kTwo64 ? ~std::uint64_t(0) : static_cast<std::uint64_t>(t);
    return f;
  }
  // lo * 2^-64 is exact after the (rounding) conversion of lo, as ldexp(lo, -64) was; no libm call.
  double toDouble() const { return static_cast<double>(hi) + static_cast<double>(lo) * (1.0 / kTwo64); }
  // Addition modulo 2^128. The integer parts are added as unsigned words, which wrap (defined
  // behaviour) where a signed sum would overflow: secure aggregation's masked words are uniformly
  // random and their partial sums wrap, the true sum of the unmasked inputs never does. Two's
  // complement: wherever the signed sum fits, the bits are the same.
  void add(const Fixed128& o) {
    const std::uint64_t s = lo + o.lo;
    const std::uint64_t h = static_cast<std::uint64_t>(hi) + static_cast<std::uint64_t>(o.hi) + (s < lo ? 1u : 0u);
    hi = static_cast<std::int64_t>(h);
    lo = s;
  }
};

// A vector of exact accumulators.
class ExactSum {
 public:
  ExactSum() = default;
  explicit ExactSum(std::size_t n) : v_(n) {}
  void resize(std::size_t n) { v_.assign(n, Fixed128{}); }
  void clear() { std::fill(v_.begin(), v_.end(), Fixed128{}); }
  std::size_t size() const { return v_.size(); }
  void add(std::size_t i, double x) { v_[i].add(Fixed128::fromDouble(x)); }
  // acc[offset + j] += w * x[j] for j < n.
  void addScaled(std::size_t offset, const float* x, std::size_t n, double w) {
    Fixed128* a = v_.data() + offset;
    std::size_t j = 0;
#if FEDSILO_EXACT_SUM_AVX512
    // Eight terms at a time: the same operations as fromDouble + add, lane by lane.
    const __m512d wv = _mm512_set1_pd(w), two64 = _mm512_set1_pd(Fixed128::kTwo64);
    const __m512i evens = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0), odds = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
    const __m512i inter0 = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), inter1 = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    const __m512i ones = _mm512_set1_epi64(1), allBits = _mm512_set1_epi64(-1);
    for (; j + 8 <= n; j += 8) {
      const __m512d v = _mm512_mul_pd(wv, _mm512_cvtps_pd(_mm256_loadu_ps(x + j)));
      const __m512d fl = _mm512_roundscale_pd(v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
      const __m512i hi = _mm512_cvttpd_epi64(fl);
      const __m512d t = _mm512_mul_pd(_mm512_sub_pd(v, fl), two64);
      const __m512i lo = _mm512_mask_mov_epi64(_mm512_cvttpd_epu64(t), _mm512_cmp_pd_mask(t, two64, _CMP_GE_OQ), allBits);
      std::int64_t* p = reinterpret_cast<std::int64_t*>(a + j);  // {hi, lo} pairs, 8 accumulators
      const __m512i A = _mm512_loadu_si512(p), B = _mm512_loadu_si512(p + 8);
      const __m512i H = _mm512_permutex2var_epi64(A, evens, B), L = _mm512_permutex2var_epi64(A, odds, B);
      const __m512i S = _mm512_add_epi64(L, lo);
      const __mmask8 carry = _mm512_cmplt_epu64_mask(S, L);
      const __m512i H2 = _mm512_mask_add_epi64(_mm512_add_epi64(H, hi), carry, _mm512_add_epi64(H, hi), ones);
      _mm512_storeu_si512(p, _mm512_permutex2var_epi64(H2, inter0, S));
      _mm512_storeu_si512(p + 8, _mm512_permutex2var_epi64(H2, inter1, S));
    }
#endif
    for (; j < n; ++j) a[j].add(Fixed128::fromDouble(w * static_cast<double>(x[j])));
  }
  double value(std::size_t i) const { return v_[i].toDouble(); }
  Fixed128* data() { return v_.data(); }
  const Fixed128* data() const { return v_.data(); }
  void merge(const ExactSum& o) {
    for (std::size_t i = 0; i < v_.size(); ++i) v_[i].add(o.v_[i]);
  }

 private:
  std::vector<Fixed128> v_;
};

}  // namespace fedsilo
