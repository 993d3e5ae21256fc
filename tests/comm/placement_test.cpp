// Placement by count and by weight (training samples): contiguous ranges covering every client once,
// owner() consistent with the ranges, and the weighted boundaries balancing the weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "comm/placement.hpp"
#include "core/rng.hpp"

namespace fedsilo {
namespace {

void expectConsistent(const Placement& pl, int K, int P) {
  int covered = 0;
  for (int r = 0; r < P; ++r) {
    EXPECT_EQ(pl.first(r), covered) << "rank " << r;
    EXPECT_GE(pl.count(r), K >= P ? 1 : 0) << "rank " << r;
    for (int k = pl.first(r); k < pl.end(r); ++k) EXPECT_EQ(pl.owner(k), r) << "client " << k;
    covered += pl.count(r);
  }
  EXPECT_EQ(covered, K);
}

TEST(Placement, ByCountCoversEveryClientOnce) {
  for (int K : {1, 5, 10, 17})
    for (int P : {1, 2, 3, 4, 8}) expectConsistent(Placement(K, P), K, P);
}

TEST(Placement, ByWeightCoversEveryClientOnceAndBalances) {
  Rng rng(7, -1, -1, Purpose::Misc);
  for (int K : {1, 2, 5, 10, 17, 100})
    for (int P : {1, 2, 3, 4, 8, 16}) {
      std::vector<std::int64_t> w(K);
      for (auto& x : w) x = 1 + static_cast<std::int64_t>(std::exp(3.0 + 2.0 * rng.normal()));  // log-normal sizes
      const Placement pl(w, P);
      expectConsistent(pl, K, P);
      if (K < 4 * P) continue;
      // No rank exceeds its fair share by more than its largest client (the boundary's granularity).
      const std::int64_t total = std::accumulate(w.begin(), w.end(), std::int64_t{0});
      for (int r = 0; r < P; ++r) {
        std::int64_t mine = 0, biggest = 0;
        for (int k = pl.first(r); k < pl.end(r); ++k) {
          mine += w[k];
          biggest = std::max(biggest, w[k]);
        }
        EXPECT_LE(mine, total / P + 2 * *std::max_element(w.begin(), w.end())) << "K " << K << " P " << P << " rank " << r;
      }
    }
}

TEST(Placement, ByWeightMovesTheBoundaryTowardsTheLightClients) {
  // W1's shape: clients 0-4 hold fewer samples than 5-9, so rank 0 takes six clients, not five.
  const std::vector<std::int64_t> w{4000, 4500, 5000, 5500, 6000, 6500, 7000, 7000, 7000, 7500};
  const Placement pl(w, 2);
  EXPECT_EQ(pl.count(0), 6);
  EXPECT_EQ(pl.count(1), 4);
  // Equal weights: counts differ by at most one, like the count placement.
  const Placement eq(std::vector<std::int64_t>(10, 3), 4);
  for (int r = 0; r < 4; ++r) {
    EXPECT_GE(eq.count(r), 2) << r;
    EXPECT_LE(eq.count(r), 3) << r;
  }
}

TEST(Placement, MoreRanksThanClientsLeavesRanksEmpty) {
  const Placement pl(std::vector<std::int64_t>{5, 1, 9}, 5);
  expectConsistent(pl, 3, 5);
  int nonEmpty = 0;
  for (int r = 0; r < 5; ++r) nonEmpty += pl.count(r) > 0;
  EXPECT_LE(nonEmpty, 3);
}

}  // namespace
}  // namespace fedsilo
