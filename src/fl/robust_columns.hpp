// Robust aggregation shared out among the ranks (docs/robustness.md, "Cost"): when the attack works
// column by column and the aggregator either does (mean, median, trimmed mean: robust/column_blocks.hpp)
// or needs only sums over the columns besides (Krum, geomed, centered and norm clipping:
// robust/block_sums.hpp), each rank attacks and aggregates whole fixed-width column blocks of all K
// updates instead of rank 0 doing all of it while the others wait. Each rank cuts its clients' updates
// into the other ranks' column ranges, one all-to-all exchanges them, and each rank puts the K rows of
// its blocks in client order. The coordinate-wise aggregators then run per block and rank 0 gathers
// the blocks' results and joins them in block order; the others exchange their blocks' partial sums by
// all-gathers, add them in block order on every rank, and rank 0 gathers the aggregate's columns. The
// blocks do not depend on the number of ranks, so neither does the result.
#pragma once
#include <cstdint>
#include <vector>

#include "comm/communicator.hpp"
#include "core/robust_config.hpp"
#include "robust/aggregator.hpp"
#include "robust/block_sums.hpp"
#include "robust/column_blocks.hpp"

namespace fedsilo {

// This rank's kept updates of a round, each row already cut into the ranks' column ranges.
struct ColumnShare {
  std::vector<int> ids;
  std::vector<double> weights;
  std::size_t cols = 0;
  std::size_t width = kColumnBlockWidth;   // the column block width (tests use narrower blocks)
  std::vector<std::vector<float>> toRank;  // per rank: its columns of every kept row, row after row
  // Kept from round to round with their buffers, as are toRank's (tens of MB a rank at K = 100 of the
  // W1 model): allocated afresh, each of their 4 KB pages would be first touched, a page fault each,
  // in every round.
  std::vector<float> received;       // the all-to-all's pieces: every sender's rows over this rank's columns
  std::vector<UpdateMatrix> blocks;  // this rank's column blocks of the round's rows, in client order
  BlockSumsWorkspace scratch;        // the summed-block aggregators' buffers

  // Keeps one client's update (`row`, all n columns) for `ranks` ranks.
  void add(int id, double weight, const std::vector<float>& row, int ranks);
  void clear();  // the kept updates (the buffers stay)
};

// A round's senders and, on rank 0, what the aggregator made of their updates.
struct AggregatedRound {
  std::vector<int> clients;  // the senders in client order (every rank)
  bool aggregated = false;   // false when fewer than `needed` updates arrived
  AggregateResult result;    // rank 0, when aggregated
};

// Collective: every rank's kept updates attacked and aggregated block by block (`share` is consumed).
// `malicious` per client; `needed` the aggregator's least number of rows. `center` is centered
// clipping's centre, the last round's aggregate (n values, or empty for zeros): each rank reads its
// own columns of it and, for centered_clip, writes its columns of the new aggregate there (rank 0 the
// whole of it). Other aggregators leave it as it is.
AggregatedRound aggregateByColumns(const Communicator& comm, const RobustConfig& cfg, std::uint64_t seed, int round,
                                   const std::vector<char>& malicious, int needed, ColumnShare& share,
                                   std::vector<double>& center);

}  // namespace fedsilo
