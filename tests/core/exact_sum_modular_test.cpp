// Fixed128::add is addition modulo 2^128: secure aggregation's masked words wrap in partial sums, and
// the MPI reduction (the same add) must give the exact total once the masks cancel.
#include <gtest/gtest.h>

#include <limits>

#include "core/exact_sum.hpp"
#include "core/rng.hpp"

namespace fedsilo {
namespace {

Fixed128 word(std::int64_t hi, std::uint64_t lo) {
  Fixed128 f;
  f.hi = hi;
  f.lo = lo;
  return f;
}

Fixed128 negate(const Fixed128& x) {  // two's complement of the 128-bit word
  const std::uint64_t lo = 0 - x.lo;
  const std::uint64_t hi = ~static_cast<std::uint64_t>(x.hi) + (x.lo == 0 ? 1u : 0u);
  return word(static_cast<std::int64_t>(hi), lo);
}

TEST(Fixed128Modular, TheIntegerPartWrapsAroundModulo2To64WithTheCarry) {
  Fixed128 a = word(std::numeric_limits<std::int64_t>::max(), ~std::uint64_t(0));
  a.add(word(0, 1));  // carry out of the fraction into a full integer part
  EXPECT_EQ(a.hi, std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(a.lo, 0u);
  a.add(word(-1, 0));
  EXPECT_EQ(a.hi, std::numeric_limits<std::int64_t>::max());
}

TEST(Fixed128Modular, MaskedPartialSumsThatWrapLeaveTheExactTotal) {
  // Three inputs, each hidden under a uniformly random 128-bit mask; the masks cancel in the total.
  const double inputs[] = {1.25, -3.5, 1e6 + 0.125};
  Rng rng(9, -1, -1, Purpose::Misc);
  Fixed128 plain, masked;
  for (double x : inputs) plain.add(Fixed128::fromDouble(x));
  std::vector<Fixed128> drawn;
  for (double x : inputs) {
    const Fixed128 m = word(static_cast<std::int64_t>(rng.next()), rng.next());
    drawn.push_back(m);
    Fixed128 y = Fixed128::fromDouble(x);
    y.add(m);
    masked.add(y);  // wraps: the masks are uniform over 2^128
  }
  for (const Fixed128& m : drawn) masked.add(negate(m));
  EXPECT_EQ(masked.hi, plain.hi);
  EXPECT_EQ(masked.lo, plain.lo);
  EXPECT_EQ(masked.toDouble(), 1.25 - 3.5 + 1e6 + 0.125);
}

}  // namespace
}  // namespace fedsilo
