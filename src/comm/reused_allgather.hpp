// An all-gather into a buffer the caller keeps from one call to the next (resized, its capacity
// reused), for a collective repeated every round with a result of a few MB: Communicator::allgatherv
// returns a fresh vector, whose every 4 KB page is then first touched (a page fault each) in every
// round. The robust aggregators' partial sums are one (fl/robust_columns.hpp).
#pragma once
#include <vector>

#include "comm/communicator.hpp"

namespace fedsilo {

// Every rank's `mine` concatenated in rank order into `all`, on every rank (Communicator::allgatherv's
// result). Collective.
void allgathervInto(const Communicator& comm, const std::vector<double>& mine, std::vector<double>& all);

}  // namespace fedsilo
