// Secure aggregation simulation: the unmasked aggregate equals ExactSum's, bit for bit, with and without
// dropouts, however the masked inputs are grouped (as ranks would).
#include "privacy/secure_aggregation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "core/exact_sum.hpp"
#include "core/rng.hpp"

using namespace fedsilo;

namespace {

// Updates of mixed sign and magnitude; the length is not a multiple of 8, so ExactSum's AVX-512 body
// and scalar tail both take part.
std::vector<std::vector<float>> makeUpdates(int clients, std::size_t n) {
  std::vector<std::vector<float>> u(clients, std::vector<float>(n));
  for (int k = 0; k < clients; ++k) {
    Rng r(9, k, 0, Purpose::Misc);
    for (auto& x : u[k]) x = static_cast<float>(r.normal() * std::pow(10.0, r.uniform(-4.0, 3.0)));
  }
  return u;
}

std::vector<double> weights(int clients) {
  std::vector<double> w;
  for (int k = 0; k < clients; ++k) w.push_back((k + 1.0) / (clients * (clients + 1) / 2.0));
  return w;
}

bool sameWords(const Fixed128* a, const Fixed128* b, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j)
    if (a[j].hi != b[j].hi || a[j].lo != b[j].lo) return false;
  return true;
}

// The server's view: masked inputs of `survivors`, added in the given order, then unmasked.
std::vector<Fixed128> secureSum(const SecureAggregation& sa, const std::vector<std::vector<float>>& u,
                                const std::vector<double>& w, const std::vector<int>& survivors) {
  const std::size_t n = u[0].size();
  std::vector<Fixed128> acc(n);
  for (int k : survivors) {
    std::vector<Fixed128> words(n);
    quantiseScaled(u[k].data(), n, w[k], words.data());
    sa.applyMasks(k, words.data());
    addWordsMod(acc.data(), words.data(), n);
  }
  sa.unmask(acc.data(), survivors);
  return acc;
}

ExactSum plainSum(const std::vector<std::vector<float>>& u, const std::vector<double>& w, const std::vector<int>& who) {
  ExactSum s(u[0].size());
  for (int k : who) s.addScaled(0, u[k].data(), u[k].size(), w[k]);
  return s;
}

}  // namespace

TEST(SecureAggregation, MaskedSumEqualsUnmaskedSumBitForBit) {
  const int clients = 7;
  const std::size_t n = 1003;
  const auto u = makeUpdates(clients, n);
  const auto w = weights(clients);
  std::vector<int> all(clients);
  std::iota(all.begin(), all.end(), 0);
  SecureAggregation sa(123, 5, all, n);
  const auto masked = secureSum(sa, u, w, all);
  const ExactSum plain = plainSum(u, w, all);
  EXPECT_TRUE(sameWords(masked.data(), plain.data(), n));
  for (std::size_t j = 0; j < n; j += 97) EXPECT_EQ(masked[j].toDouble(), plain.value(j));
}

TEST(SecureAggregation, DroppedClientsMasksAreRemovedByRecovery) {
  const int clients = 10;
  const std::size_t n = 257;
  const auto u = makeUpdates(clients, n);
  const auto w = weights(clients);
  std::vector<int> ids = {3, 8, 11, 12, 20, 21, 30, 31, 40, 41};  // ids need not be contiguous
  std::vector<std::vector<float>> byId(42, std::vector<float>(n, 0.0f));
  std::vector<double> wById(42, 0.0);
  for (int i = 0; i < clients; ++i) byId[ids[i]] = u[i], wById[ids[i]] = w[i];
  SecureAggregation sa(7, 2, ids, n);
  for (const std::vector<int>& survivors :
       {std::vector<int>{3, 8, 12, 20, 30, 31, 41}, std::vector<int>{41, 40, 31, 30, 21, 20}, ids}) {
    const auto masked = secureSum(sa, byId, wById, survivors);
    EXPECT_TRUE(sameWords(masked.data(), plainSum(byId, wById, survivors).data(), n)) << survivors.size();
  }
  // Without recovery, a dropped client's pair masks stay in the sum.
  std::vector<Fixed128> acc(n);
  for (int k : {3, 8, 12, 20, 30, 31, 41}) {
    std::vector<Fixed128> words(n);
    quantiseScaled(byId[k].data(), n, wById[k], words.data());
    sa.applyMasks(k, words.data());
    addWordsMod(acc.data(), words.data(), n);
  }
  SecureAggregation noDrop(7, 2, {3, 8, 12, 20, 30, 31, 41}, n);  // pretends the others never joined
  noDrop.unmask(acc.data(), {3, 8, 12, 20, 30, 31, 41});
  EXPECT_FALSE(sameWords(acc.data(), plainSum(byId, wById, {3, 8, 12, 20, 30, 31, 41}).data(), n));
}

// Ranks would each add their clients' masked inputs and reduce the partial sums: any grouping gives the
// same aggregate.
TEST(SecureAggregation, PartialSumsInAnyGroupingGiveTheSameAggregate) {
  const int clients = 8;
  const std::size_t n = 64;
  const auto u = makeUpdates(clients, n);
  const auto w = weights(clients);
  std::vector<int> all(clients);
  std::iota(all.begin(), all.end(), 0);
  SecureAggregation sa(1, 0, all, n);
  const auto reference = secureSum(sa, u, w, all);
  for (int ranks : {2, 3, 4}) {
    std::vector<std::vector<Fixed128>> partial(ranks, std::vector<Fixed128>(n));
    for (int k = 0; k < clients; ++k) {
      std::vector<Fixed128> words(n);
      quantiseScaled(u[k].data(), n, w[k], words.data());
      sa.applyMasks(k, words.data());
      addWordsMod(partial[k % ranks].data(), words.data(), n);
    }
    for (int r = ranks - 1; r > 0; --r) addWordsMod(partial[0].data(), partial[r].data(), n);
    sa.unmask(partial[0].data(), all);
    EXPECT_TRUE(sameWords(partial[0].data(), reference.data(), n)) << ranks << " ranks";
  }
}

TEST(SecureAggregation, AMaskedInputHidesTheUpdate) {
  const std::size_t n = 1000;
  const auto u = makeUpdates(3, n);
  SecureAggregation sa(5, 1, {0, 1, 2}, n);
  std::vector<Fixed128> plain(n), masked(n);
  quantiseScaled(u[0].data(), n, 1.0, plain.data());
  masked = plain;
  sa.applyMasks(0, masked.data());
  // Quantised updates have small integer parts; masked words have uniformly random ones.
  int small = 0;
  for (std::size_t j = 0; j < n; ++j) small += std::llabs(masked[j].hi) < (1LL << 40);
  EXPECT_LT(small, 5);
  // Masks differ between rounds and between clients.
  std::vector<Fixed128> otherRound = plain;
  SecureAggregation(5, 2, {0, 1, 2}, n).applyMasks(0, otherRound.data());
  EXPECT_FALSE(sameWords(masked.data(), otherRound.data(), n));
}

TEST(SecureAggregation, RecoveryNeedsThresholdManyKnownSurvivors) {
  SecureAggregation sa(1, 0, {0, 1, 2, 3, 4}, 4);
  EXPECT_EQ(sa.threshold(), 3);
  std::vector<Fixed128> acc(4);
  EXPECT_THROW(sa.unmask(acc.data(), {0, 1}), RuntimeError);
  EXPECT_THROW(sa.unmask(acc.data(), {0, 1, 9}), RuntimeError);
  EXPECT_THROW(sa.unmask(acc.data(), {0, 1, 1}), RuntimeError);
  EXPECT_NO_THROW(sa.unmask(acc.data(), {0, 1, 2}));
  EXPECT_THROW(sa.applyMasks(9, acc.data()), RuntimeError);
  SecureAggregation lenient(1, 0, {0, 1, 2, 3, 4}, 4, 1);
  EXPECT_TRUE(lenient.recoverable(1));
}

TEST(SecureAggregation, ModularWordArithmeticWraps) {
  Fixed128 a;
  a.hi = INT64_MAX;
  a.lo = ~0ULL;
  Fixed128 one;
  one.lo = 1;
  addWordsMod(&a, &one, 1);
  EXPECT_EQ(a.hi, INT64_MIN);
  EXPECT_EQ(a.lo, 0u);
  subWordsMod(&a, &one, 1);
  EXPECT_EQ(a.hi, INT64_MAX);
  EXPECT_EQ(a.lo, ~0ULL);
}

// The cost model by hand for n = 3 clients, d = 1 dropped, m = 10 words, default sizes
// (key 32, share 32, id 4, AEAD overhead 28, word 16 bytes): a share ciphertext is 2*4 + 2*32 + 28 = 100.
TEST(SecureAggregation, CostModelCountsEveryProtocolRound) {
  const SecAggCost c = secAggCost(3, 1, 10);
  EXPECT_DOUBLE_EQ(c.bytesSentPerClient, 64 + 2 * 100 + 160 + 2 * 36);
  EXPECT_DOUBLE_EQ(c.bytesReceivedPerClient, 3 * 64 + 3 * 4 + 2 * 100 + 2 * 4);
  EXPECT_DOUBLE_EQ(c.plainBytesPerClient, 40);
  EXPECT_EQ(c.messagesPerClient, 8);
  EXPECT_EQ(c.extraRoundTrips, 3);
  EXPECT_DOUBLE_EQ(c.clientPrgWords, 30);
  EXPECT_DOUBLE_EQ(c.serverPrgWords, (2 + 1 * 2) * 10);
  // The masked upload dominates for model-sized vectors: 4x the float upload plus O(n) key traffic.
  const SecAggCost big = secAggCost(10, 0, 100000);
  EXPECT_NEAR(big.bytesSentPerClient / big.plainBytesPerClient, 4.0, 0.01);
}
