// Sums over a block that the compressors use as scales. Fixed lanes (element i goes to lane i mod 8,
// the lanes added in order at the end) so that the result does not depend on the buffer's alignment
// and the compiler can keep the lanes in one vector register (no reassociation needed).
#pragma once
#include <cmath>
#include <cstddef>

namespace fedsilo::blockmath {

inline constexpr std::size_t kLanes = 8;

template <typename Term>
double laneSum(const float* x, std::size_t m, Term term) {
  double lane[kLanes] = {};
  const std::size_t full = m - m % kLanes;
  for (std::size_t i = 0; i < full; i += kLanes)
    for (std::size_t j = 0; j < kLanes; ++j) lane[j] += term(static_cast<double>(x[i + j]));
  for (std::size_t i = full; i < m; ++i) lane[i - full] += term(static_cast<double>(x[i]));
  double s = 0.0;
  for (double l : lane) s += l;
  return s;
}

// The block's 2-norm.
inline double norm2(const float* x, std::size_t m) {
  return std::sqrt(laneSum(x, m, [](double v) { return v * v; }));
}

// The block's 1-norm.
inline double norm1(const float* x, std::size_t m) {
  return laneSum(x, m, [](double v) { return std::fabs(v); });
}

}  // namespace fedsilo::blockmath
