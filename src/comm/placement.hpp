// Which clients live on which rank: contiguous ranges of client ids, rank r hosting [first(r), end(r)).
// Two constructors, both pure functions of their arguments (the same on every rank):
//  * by count, Placement(K, P): the first K % P ranks host one client more than the rest;
//  * by weight, Placement(weights, P): the boundaries balance the sum of the weights per rank (the
//    driver passes each client's training samples, so that a round does not wait for the rank that
//    happens to hold the big clients); every rank hosts at least one client when K >= P.
// Results never depend on the placement (exact sums, random streams keyed by client): it only decides
// where the work runs.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/error.hpp"

namespace fedsilo {

class Placement {
 public:
  Placement(int numClients, int numRanks) : k_(numClients), p_(numRanks) {
    if (numClients < 1) throw ConfigError(fmt("clients = ", numClients, ": expected at least 1"));
    FEDSILO_ASSERT(numRanks >= 1);
    first_.resize(static_cast<std::size_t>(p_) + 1);
    for (int r = 0; r <= p_; ++r) first_[r] = r * (k_ / p_) + std::min(r, k_ % p_);
  }

  Placement(const std::vector<std::int64_t>& weights, int numRanks)
      : k_(static_cast<int>(weights.size())), p_(numRanks) {
    if (k_ < 1) throw ConfigError(fmt("clients = ", k_, ": expected at least 1"));
    FEDSILO_ASSERT(numRanks >= 1);
    std::vector<std::int64_t> prefix(static_cast<std::size_t>(k_) + 1, 0);
    for (int k = 0; k < k_; ++k) prefix[k + 1] = prefix[k] + std::max<std::int64_t>(weights[k], 0);
    const std::int64_t total = prefix[k_];
    first_.assign(static_cast<std::size_t>(p_) + 1, 0);
    first_[p_] = k_;
    for (int r = 1; r < p_; ++r) {
      // The boundary whose prefix sum is closest to r/P of the total (integer arithmetic: exact).
      const std::int64_t target = total * r;  // compare prefix * P with total * r
      int b = static_cast<int>(std::lower_bound(prefix.begin(), prefix.end(), 0,
                                                [&](std::int64_t v, int) { return v * p_ < target; }) -
                               prefix.begin());
      if (b > 0 && target - prefix[b - 1] * p_ <= prefix[std::min(b, k_)] * p_ - target) --b;
      b = std::min(b, k_);
      // Monotone, and room for one client per remaining rank when there are enough clients.
      const int lo = first_[r - 1] + (k_ >= p_ ? 1 : 0);
      const int hi = k_ >= p_ ? k_ - (p_ - r) : k_;
      first_[r] = std::clamp(b, std::min(lo, hi), hi);
    }
  }

  int numClients() const { return k_; }
  int numRanks() const { return p_; }
  int first(int rank) const { return first_[rank]; }
  int count(int rank) const { return first_[rank + 1] - first_[rank]; }
  int end(int rank) const { return first_[rank + 1]; }
  int owner(int client) const {
    // the last rank whose range starts at or before `client` and is not empty
    const auto it = std::upper_bound(first_.begin(), first_.end() - 1, client);
    int r = static_cast<int>(it - first_.begin()) - 1;
    while (r > 0 && count(r) == 0) --r;
    return r;
  }

 private:
  int k_, p_;
  std::vector<int> first_;  // P + 1 boundaries
};

}  // namespace fedsilo
