// The clients' updates of one round, one row per client in ascending client order (K x n floats):
// what robust aggregators and model-poisoning attacks work on. No MPI here: the round driver gathers
// the rows (fl/robust_round.hpp).
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

namespace fedsilo {

struct UpdateMatrix {
  int rows = 0;
  std::size_t cols = 0;
  std::vector<float> values;  // row-major

  UpdateMatrix() = default;
  UpdateMatrix(int numRows, std::size_t numCols)
      : rows(numRows), cols(numCols), values(static_cast<std::size_t>(numRows) * numCols, 0.0f) {}
  float* row(int k) { return values.data() + static_cast<std::size_t>(k) * cols; }
  const float* row(int k) const { return values.data() + static_cast<std::size_t>(k) * cols; }
};

// Sum of squares of a float vector in double precision, with a fixed accumulation order (four partial
// sums), so the result does not depend on the thread, rank or compiler's vectorisation choices.
inline double squaredNorm(const float* x, std::size_t n) {
  double s[4] = {0.0, 0.0, 0.0, 0.0};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (std::size_t j = 0; j < 4; ++j) s[j] += static_cast<double>(x[i + j]) * static_cast<double>(x[i + j]);
  for (; i < n; ++i) s[0] += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// ||x - y||^2 in double precision, fixed accumulation order as squaredNorm; y is a float row or a
// double centre.
template <class T>
double squaredDistance(const float* x, const T* y, std::size_t n) {
  double s[4] = {0.0, 0.0, 0.0, 0.0};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (std::size_t j = 0; j < 4; ++j) {
      const double d = static_cast<double>(x[i + j]) - static_cast<double>(y[i + j]);
      s[j] += d * d;
    }
  for (; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - static_cast<double>(y[i]);
    s[0] += d * d;
  }
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// squaredDistance(x, y[r]) for four float rows y[r] at once, each with squaredDistance's operations in
// its order (the same bits): its four partial sums are the lanes of one vector (GCC's and clang's vector
// extension, lowered to whatever the build has), and the four rows' chains overlap.
inline void squaredDistances4(const float* x, const float* const (&y)[4], std::size_t n, double (&out)[4]) {
  typedef float Floats4 __attribute__((vector_size(16)));
  typedef double Doubles4 __attribute__((vector_size(32)));
  Doubles4 s[4] = {};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    Floats4 xi, yi;  // no function passes or returns these vectors: their ABI differs between builds
    __builtin_memcpy(&xi, x + i, sizeof xi);
    const Doubles4 a = __builtin_convertvector(xi, Doubles4);
    for (std::size_t r = 0; r < 4; ++r) {
      __builtin_memcpy(&yi, y[r] + i, sizeof yi);
      const Doubles4 d = a - __builtin_convertvector(yi, Doubles4);
      s[r] += d * d;
    }
  }
  for (; i < n; ++i)
    for (std::size_t r = 0; r < 4; ++r) {
      const double d = static_cast<double>(x[i]) - static_cast<double>(y[r][i]);
      s[r][0] += d * d;
    }
  for (std::size_t r = 0; r < 4; ++r) out[r] = (s[r][0] + s[r][1]) + (s[r][2] + s[r][3]);
}

// ||x - y||^2 for a float row and a double vector, in double with 32 partial sums (lane j takes the
// elements i = j mod 32) added in a fixed tree: the order is fixed, as in squaredDistance, but wide
// enough for the compiler to keep several vector accumulators in flight.
inline double squaredDistanceWide(const float* x, const double* y, std::size_t n) {
  constexpr std::size_t kLanes = 32;
  double s[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (std::size_t j = 0; j < kLanes; ++j) {
      const double d = static_cast<double>(x[i + j]) - y[i + j];
      s[j] += d * d;
    }
  for (std::size_t j = 0; i < n; ++i, ++j) {
    const double d = static_cast<double>(x[i]) - y[i];
    s[j] += d * d;
  }
  for (std::size_t w = kLanes / 2; w >= 1; w /= 2)
    for (std::size_t j = 0; j < w; ++j) s[j] += s[j + w];
  return s[0];
}

// sum_k c_k x_k over the rows with c_k != 0, into `out` (n doubles), rows in order. Row by row, one
// sequential stream over the matrix: column blocks that touch all K rows at once (K streams far
// apart) are slower.
inline void combineRows(const UpdateMatrix& u, const std::vector<double>& coeff, std::vector<double>& out) {
  out.assign(u.cols, 0.0);
  for (int k = 0; k < u.rows; ++k) {
    const double c = coeff[static_cast<std::size_t>(k)];
    if (c == 0.0) continue;
    const float* x = u.row(k);
    for (std::size_t i = 0; i < u.cols; ++i) out[i] += c * static_cast<double>(x[i]);
  }
}

}  // namespace fedsilo
