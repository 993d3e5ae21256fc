// Collectives into buffers the caller keeps from one call to the next (resized, their capacity
// reused), for those repeated every round with results of a few MB or more: Communicator's own return
// fresh vectors, whose every 4 KB page is then first touched (a page fault each) in every round. The
// robust aggregators' exchange of the rows and of their partial sums are such (fl/robust_columns.hpp).
#pragma once
#include <vector>

#include "comm/communicator.hpp"

namespace fedsilo {

// Every rank's `mine` concatenated in rank order into `all`, on every rank. Collective.
// Communicator::allgatherv and ::alltoallv are these two into a fresh vector; both are defined with
// Communicator's collectives, for the same element types.
template <typename T>
void allgathervInto(const Communicator& comm, const std::vector<T>& mine, std::vector<T>& all);

// Every rank's pieces for this rank, in source-rank order, into `out`. Collective.
template <typename T>
void alltoallvInto(const Communicator& comm, const std::vector<std::vector<T>>& toRank, std::vector<T>& out,
                   std::vector<int>* counts = nullptr);

}  // namespace fedsilo
