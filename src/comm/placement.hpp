// Which clients live on which rank. Every rank hosts an ascending list of client ids; the lists of all
// ranks cover every client once. Two constructors, both pure functions of their arguments (the same on
// every rank):
//  * by count, Placement(K, P): contiguous ranges, the first K % P ranks hosting one client more;
//  * by weight, Placement(weights, P): the assignment whose heaviest rank carries the least weight found
//    (the driver passes each client's training samples, so that a round does not wait for the rank
//    that happens to hold the big clients). Contiguous ranges are kept unless a free assignment lowers
//    the heaviest rank's weight: with ten Dirichlet clients on 3 ranks the best ranges leave one rank
//    14% above its fair share, a free assignment 0.5%. Every rank hosts at least one client when K >= P.
// Results never depend on the placement (exact sums, random streams keyed by client): it only decides
// where the work runs. Whatever gathers per-client values to one rank receives them rank by rank, in
// rankOrder(), and puts them back in client order with toClientOrder.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/error.hpp"

namespace fedsilo {

class Placement {
 public:
  Placement(int numClients, int numRanks);
  Placement(const std::vector<std::int64_t>& weights, int numRanks);

  int numClients() const { return static_cast<int>(owner_.size()); }
  int numRanks() const { return static_cast<int>(clients_.size()); }
  // The clients `rank` hosts, ascending.
  const std::vector<int>& clients(int rank) const { return clients_[static_cast<std::size_t>(rank)]; }
  int count(int rank) const { return static_cast<int>(clients(rank).size()); }
  int owner(int client) const { return owner_[static_cast<std::size_t>(client)]; }
  // The position of `client` in its owner's list: the index of its row in that rank's local arrays.
  int slot(int client) const { return slot_[static_cast<std::size_t>(client)]; }
  // Every client, rank by rank: the order in which a gather of per-client rows delivers them.
  const std::vector<int>& rankOrder() const { return rankOrder_; }
  bool contiguous() const;

  // Rows of `width` values per client, gathered rank by rank (rankOrder()), put in client order. An
  // empty vector, what a gather leaves on the ranks other than its root, stays empty.
  template <class T>
  std::vector<T> toClientOrder(const std::vector<T>& byRank, std::size_t width) const {
    if (byRank.empty()) return {};
    FEDSILO_ASSERT(byRank.size() == rankOrder_.size() * width, "gathered rows do not match the placement");
    std::vector<T> out(byRank.size());
    for (std::size_t i = 0; i < rankOrder_.size(); ++i)
      for (std::size_t j = 0; j < width; ++j)
        out[static_cast<std::size_t>(rankOrder_[i]) * width + j] = byRank[i * width + j];
    return out;
  }

 private:
  explicit Placement(std::vector<int> owner, int numRanks);

  std::vector<int> owner_, slot_, rankOrder_;
  std::vector<std::vector<int>> clients_;
};

}  // namespace fedsilo
