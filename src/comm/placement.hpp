// Which clients live on which rank: a pure function of (K, P). Block distribution: rank r hosts a
// contiguous range of client ids, the first K % P ranks one more than the rest.
#pragma once
#include "core/error.hpp"

namespace fedsilo {

class Placement {
 public:
  Placement(int numClients, int numRanks) : k_(numClients), p_(numRanks) {
    if (numClients < 1) throw ConfigError(fmt("clients = ", numClients, ": expected at least 1"));
    FEDSILO_ASSERT(numRanks >= 1);
  }
  int numClients() const { return k_; }
  int numRanks() const { return p_; }
  int first(int rank) const { return rank * (k_ / p_) + (rank < k_ % p_ ? rank : k_ % p_); }
  int count(int rank) const { return k_ / p_ + (rank < k_ % p_ ? 1 : 0); }
  int end(int rank) const { return first(rank) + count(rank); }
  int owner(int client) const {
    const int big = k_ / p_ + 1, nBig = k_ % p_;
    if (client < big * nBig) return client / big;
    return nBig + (client - big * nBig) / (k_ / p_);
  }

 private:
  int k_, p_;
};

}  // namespace fedsilo
