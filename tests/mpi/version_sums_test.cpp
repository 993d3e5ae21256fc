// The asynchronous driver's batched reduction (fl/version_sums.hpp) against one exact sum per version
// computed alone on one rank, at 1, 2 and 4 ranks: batching and the rank count change no bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "comm/communicator.hpp"
#include "core/exact_sum.hpp"
#include "core/rng.hpp"
#include "fl/version_sums.hpp"

using namespace fedsilo;

namespace {

constexpr std::size_t kParams = 37;  // not a multiple of the AVX-512 width: the scalar tail runs too
constexpr int kVersions = 3, kUpdatesPerVersion = 5;

// Update u of version v and its weight, the same on every rank (values spanning many binades, so that
// a float sum in another order would differ).
std::vector<float> update(int v, int u) {
  Rng rng(17, v, u, Purpose::Misc);
  std::vector<float> x(kParams);
  for (float& e : x) e = static_cast<float>(rng.normal() * std::pow(10.0, rng.uniform(-6.0, 3.0)));
  return x;
}
double weight(int v, int u) { return 1.0 + 0.37 * v + 0.11 * u; }

bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST(VersionSums, BatchEqualsEachVersionReducedAlone) {
  const Communicator comm = Communicator::world();
  VersionSums sums(kParams);
  const int first = 4;
  sums.start(first, kVersions);
  // Update u of every version lives on rank u % P, as a version's silos are spread over the ranks.
  for (int v = first; v < first + kVersions; ++v)
    for (int u = 0; u < kUpdatesPerVersion; ++u)
      if (u % comm.size() == comm.rank()) sums.add(v, update(v, u).data(), weight(v, u));
  sums.reduce(comm);
  EXPECT_TRUE(sums.holds(first + kVersions - 1));
  EXPECT_FALSE(sums.holds(first + kVersions));
  if (!comm.isRoot()) return;
  std::vector<double> got;
  for (int v = first; v < first + kVersions; ++v) {
    ExactSum alone(kParams);
    for (int u = kUpdatesPerVersion - 1; u >= 0; --u) alone.addScaled(0, update(v, u).data(), kParams, weight(v, u));
    sums.values(v, got);
    ASSERT_EQ(got.size(), kParams);
    for (std::size_t i = 0; i < kParams; ++i)
      EXPECT_TRUE(sameBits(got[i], alone.value(i))) << "version " << v << " parameter " << i;
  }
}

TEST(VersionSums, ARestartedBatchStartsFromZero) {
  const Communicator comm = Communicator::world();
  VersionSums sums(kParams);
  sums.start(1, 2);
  sums.add(2, update(2, 0).data(), 1.0);
  sums.forget();
  EXPECT_FALSE(sums.holds(1));
  sums.start(2, 1);  // the memory of the earlier batch is reused, its sums are not
  if (comm.isRoot()) sums.add(2, update(2, 1).data(), 2.0);
  sums.reduce(comm);
  if (!comm.isRoot()) return;
  ExactSum alone(kParams);
  alone.addScaled(0, update(2, 1).data(), kParams, 2.0);
  std::vector<double> got;
  sums.values(2, got);
  for (std::size_t i = 0; i < kParams; ++i) EXPECT_TRUE(sameBits(got[i], alone.value(i))) << i;
}
