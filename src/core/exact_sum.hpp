// Order-independent exact summation of doubles.
//
// Aggregation must give bit-identical results at 1, 2 or 4 ranks, but a floating-point sum
// depends on the order of its terms, and MPI_Reduce's order depends on the rank count. Each term is
// therefore quantised once, deterministically, to a 128-bit fixed-point number (64 integer bits,
// 64 fraction bits: resolution 5.4e-20, range +-9.2e18), and fixed-point addition is exact and
// associative. The only rounding is the per-term truncation, which does not depend on the order.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

namespace fedsilo {

struct Fixed128 {
  std::int64_t hi = 0;   // integer part (floor)
  std::uint64_t lo = 0;  // fraction * 2^64

  static Fixed128 fromDouble(double x) {
    Fixed128 f;
    const double fl = std::floor(x);
    f.hi = static_cast<std::int64_t>(fl);
    f.lo = static_cast<std::uint64_t>(std::ldexp(x - fl, 64) >= 18446744073709551615.0
                                          ? 18446744073709551615.0
                                          : std::ldexp(x - fl, 64));
    return f;
  }
  double toDouble() const { return static_cast<double>(hi) + std::ldexp(static_cast<double>(lo), -64); }
  void add(const Fixed128& o) {
    const std::uint64_t s = lo + o.lo;
    hi += o.hi + (s < lo ? 1 : 0);
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
    for (std::size_t j = 0; j < n; ++j) a[j].add(Fixed128::fromDouble(w * static_cast<double>(x[j])));
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
