// Placement by count and by weight (training samples): every client on exactly one rank, the lists,
// owners, slots and rank order consistent, the weighted placement as light as the best assignment that
// an exhaustive search finds for small federations, and gathered rows put back in client order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "comm/placement.hpp"
#include "core/rng.hpp"

namespace fedsilo {
namespace {

using Weights = std::vector<std::int64_t>;

void expectConsistent(const Placement& pl, int K, int P) {
  ASSERT_EQ(pl.numClients(), K);
  ASSERT_EQ(pl.numRanks(), P);
  std::vector<int> seen(static_cast<std::size_t>(K), 0), order;
  for (int r = 0; r < P; ++r) {
    const std::vector<int>& mine = pl.clients(r);
    EXPECT_EQ(pl.count(r), static_cast<int>(mine.size()));
    EXPECT_GE(pl.count(r), K >= P ? 1 : 0) << "rank " << r;
    EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end())) << "rank " << r;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const int k = mine[i];
      ++seen[static_cast<std::size_t>(k)];
      EXPECT_EQ(pl.owner(k), r) << "client " << k;
      EXPECT_EQ(pl.slot(k), static_cast<int>(i)) << "client " << k;
    }
    order.insert(order.end(), mine.begin(), mine.end());
  }
  for (int k = 0; k < K; ++k) EXPECT_EQ(seen[static_cast<std::size_t>(k)], 1) << "client " << k;
  EXPECT_EQ(pl.rankOrder(), order);
}

std::int64_t heaviest(const Placement& pl, const Weights& w) {
  std::int64_t most = 0;
  for (int r = 0; r < pl.numRanks(); ++r) {
    std::int64_t load = 0;
    for (int k : pl.clients(r)) load += w[static_cast<std::size_t>(k)];
    most = std::max(most, load);
  }
  return most;
}

// The lightest heaviest rank over all P^K assignments that give every rank a client.
std::int64_t exhaustiveOptimum(const Weights& w, int P) {
  const int K = static_cast<int>(w.size());
  std::vector<int> owner(static_cast<std::size_t>(K), 0);
  std::int64_t best = std::accumulate(w.begin(), w.end(), std::int64_t{0});
  for (;;) {
    std::vector<std::int64_t> load(static_cast<std::size_t>(P), 0);
    std::vector<int> count(static_cast<std::size_t>(P), 0);
    for (int k = 0; k < K; ++k) load[owner[k]] += w[k], ++count[owner[k]];
    if (*std::min_element(count.begin(), count.end()) > 0) best = std::min(best, *std::max_element(load.begin(), load.end()));
    int k = 0;
    while (k < K && ++owner[k] == P) owner[k++] = 0;
    if (k == K) return best;
  }
}

// The training-set sizes of W1's ten clients (Fashion-MNIST, Dirichlet 0.5, seed 0).
const Weights kW1{6280, 6232, 3711, 6594, 3774, 3032, 7093, 7225, 5828, 10231};

TEST(Placement, ByCountIsContiguousAndCoversEveryClientOnce) {
  for (int K : {1, 5, 10, 17})
    for (int P : {1, 2, 3, 4, 8}) {
      const Placement pl(K, P);
      expectConsistent(pl, K, P);
      EXPECT_TRUE(pl.contiguous()) << "K " << K << " P " << P;
      for (int r = 0; r < P; ++r) EXPECT_LE(pl.count(r), (K + P - 1) / P) << "K " << K << " P " << P;
    }
}

TEST(Placement, ByWeightCoversEveryClientOnceAndBalances) {
  Rng rng(7, -1, -1, Purpose::Misc);
  for (int K : {1, 2, 5, 10, 17, 100, 1000, 5000})  // 5000: beyond the search, heaviest first only
    for (int P : {1, 2, 3, 4, 8, 16}) {
      Weights w(static_cast<std::size_t>(K));
      for (auto& x : w) x = 1 + static_cast<std::int64_t>(std::exp(3.0 + 2.0 * rng.normal()));  // log-normal sizes
      const Placement pl(w, P);
      expectConsistent(pl, K, P);
      if (K < P) continue;
      // No rank exceeds the mean by more than the heaviest client (what placing the clients heaviest
      // first on the lightest rank guarantees; the search only lowers it).
      const std::int64_t total = std::accumulate(w.begin(), w.end(), std::int64_t{0});
      EXPECT_LE(heaviest(pl, w), (total + P - 1) / P + *std::max_element(w.begin(), w.end())) << "K " << K << " P " << P;
    }
}

TEST(Placement, ByWeightFindsTheLightestAssignmentOfW1sClients) {
  for (int P : {2, 3, 4}) {
    const Placement pl(kW1, P);
    expectConsistent(pl, 10, P);
    EXPECT_EQ(heaviest(pl, kW1), exhaustiveOptimum(kW1, P)) << "P " << P;
  }
  // Contiguous ranges cannot do as well here: the best boundary leaves rank 1 30,377 samples.
  const Placement two(kW1, 2);
  EXPECT_FALSE(two.contiguous());
  EXPECT_LT(heaviest(two, kW1), 30377);
}

TEST(Placement, ByWeightFindsTheLightestAssignmentOfRandomSmallFederations) {
  Rng rng(11, -1, -1, Purpose::Misc);
  for (int trial = 0; trial < 20; ++trial) {
    const int K = 4 + trial % 5, P = 2 + trial % 3;
    Weights w(static_cast<std::size_t>(K));
    for (auto& x : w) x = 1 + static_cast<std::int64_t>(std::exp(5.0 + rng.normal()));
    const Placement pl(w, P);
    expectConsistent(pl, K, P);
    EXPECT_EQ(heaviest(pl, w), exhaustiveOptimum(w, P)) << "trial " << trial;
  }
}

TEST(Placement, EqualWeightsKeepContiguousRanges) {
  // A free assignment is taken only when it is lighter; equal clients split as the count placement does.
  const Placement eq(Weights(10, 3), 4);
  expectConsistent(eq, 10, 4);
  EXPECT_TRUE(eq.contiguous());
  for (int r = 0; r < 4; ++r) {
    EXPECT_GE(eq.count(r), 2) << r;
    EXPECT_LE(eq.count(r), 3) << r;
  }
}

TEST(Placement, ZeroWeightClientsStillGiveEveryRankOne) {
  const Placement pl(Weights{0, 0, 0, 9, 0}, 4);
  expectConsistent(pl, 5, 4);
}

TEST(Placement, MoreRanksThanClientsLeavesRanksEmpty) {
  const Placement pl(Weights{5, 1, 9}, 5);
  expectConsistent(pl, 3, 5);
  int nonEmpty = 0;
  for (int r = 0; r < 5; ++r) nonEmpty += pl.count(r) > 0;
  EXPECT_LE(nonEmpty, 3);
}

TEST(Placement, ToClientOrderUndoesTheRankOrder) {
  const Placement pl(kW1, 2);
  ASSERT_FALSE(pl.contiguous());
  // Two values per client, as a gather delivers them: rank 0's clients, then rank 1's.
  std::vector<double> byRank;
  for (int k : pl.rankOrder()) byRank.insert(byRank.end(), {10.0 * k, 10.0 * k + 1});
  const std::vector<double> byClient = pl.toClientOrder(byRank, 2);
  ASSERT_EQ(byClient.size(), 20u);
  for (int k = 0; k < 10; ++k) {
    EXPECT_EQ(byClient[2 * k], 10.0 * k) << k;
    EXPECT_EQ(byClient[2 * k + 1], 10.0 * k + 1) << k;
  }
  EXPECT_TRUE(pl.toClientOrder(std::vector<double>{}, 2).empty());  // the ranks other than a gather's root
}

}  // namespace
}  // namespace fedsilo
