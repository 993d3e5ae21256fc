// What the bf16 kernel tests (bf16_conv_test.cpp, bf16_dense_test.cpp) share: bf16 switched on for the
// layers built in a scope, random operands (optionally already bf16 values), and the error bound of a
// sum of K products against a long-double reference, S being the sum of |terms| of the element and
// u = 2^-24 the fp32 unit roundoff:
//  - operands already bf16 (their products are exact in fp32): |got - ref| <= (K + 2) u S (two
//    roundings per VDPBF16PS pair, one for the bias);
//  - fp32 operands, rounded to bf16 by the layer: bf16 keeps 8 significant bits, so each rounding to
//    nearest errs by at most 2^-8 relative and a product of two rounded values by at most
//    2^-7 + 2^-16; the rounded terms sum to at most (1 + 2^-6) S, hence
//    |got - ref| <= (2^-7 (1 + 2^-9) + (K + 2) u (1 + 2^-6)) S.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "grad_check.hpp"
#include "nn/bf16.hpp"

namespace fedsilo::test {

class Bf16Scope {  // bf16 on for the layers built inside, off again after
 public:
  Bf16Scope() { selectBf16(true); }
  ~Bf16Scope() { selectBf16(false); }
  Bf16Scope(const Bf16Scope&) = delete;
  Bf16Scope& operator=(const Bf16Scope&) = delete;
};

inline std::vector<float> randomFloats(std::size_t n, std::uint64_t seed, bool bf16Values) {
  std::vector<float> v;
  for (double d : randomVector(n, seed)) v.push_back(bf16Values ? fromBf16(toBf16(static_cast<float>(d))) : float(d));
  return v;
}

inline bool skipWithoutBf16() {
  const std::string missing = bf16Missing();
  if (missing.empty()) return false;
  std::printf("bf16 not available here: %s\n", missing.c_str());
  return true;
}

// The bound's fixed part: 0 for bf16 operands, what two roundings to bf16 can cost a product otherwise.
inline double bf16ProductError(bool bf16Operands) {
  return bf16Operands ? 0.0 : std::ldexp(1.0, -7) * (1 + std::ldexp(1.0, -9));
}
// The bound's part per term of the sum.
inline double fp32SumError(bool bf16Operands) {
  return std::ldexp(1.0, -24) * (bf16Operands ? 1.0 : 1 + std::ldexp(1.0, -6));
}

// Worst |got - want| / S over the elements, failing any element above `bound(K) * S`.
inline double worstRatio(const char* what, const std::vector<float>& got, const std::vector<long double>& want,
                         const std::vector<long double>& sum, int K, double perTerm, double fixed) {
  const double bound = fixed + (K + 2) * perTerm;
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double err = static_cast<double>(std::fabs(got[i] - want[i]));
    const double s = static_cast<double>(sum[i]);
    EXPECT_LE(err, bound * s + 1e-30) << what << "[" << i << "]: got " << got[i] << ", want " << double(want[i])
                                      << ", K = " << K;
    if (s > 0) worst = std::max(worst, err / s);
    if (err > bound * s + 1e-30) break;
  }
  return worst;
}

// fp32 operands: the bf16 rounding must show somewhere (fp32 products would stay within about K u).
inline constexpr double kBf16Shows = 1.0 / 8192;  // 2^-13

}  // namespace fedsilo::test
