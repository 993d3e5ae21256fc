// Collectives into buffers the caller keeps from one call to the next (resized, their capacity
// reused), for those repeated every round with results of a few MB or more: Communicator's own return
// fresh vectors, whose every 4 KB page is then first touched (a page fault each) in every round. The
// robust aggregators' exchange of the rows and of their partial sums are such (fl/robust_columns.hpp).
#pragma once
#include <vector>

#include "comm/communicator.hpp"

namespace fedsilo {

// Every rank's `mine` concatenated in rank order into `all`, on every rank (Communicator::allgatherv's
// result). Collective.
void allgathervInto(const Communicator& comm, const std::vector<double>& mine, std::vector<double>& all);

// Communicator::alltoallv's result into `out` (Communicator::alltoallv is this into a fresh vector;
// defined with it, for the same element types). Collective.
template <typename T>
void alltoallvInto(const Communicator& comm, const std::vector<std::vector<T>>& toRank, std::vector<T>& out,
                   std::vector<int>* counts = nullptr);

}  // namespace fedsilo
