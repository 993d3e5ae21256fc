// Coordinate-wise robust aggregation shared out among the ranks (docs/robustness.md, "Cost"): when
// the aggregator and the attack work column by column (robust/column_blocks.hpp), each rank attacks
// and aggregates whole fixed-width column blocks of all K updates instead of rank 0 doing all of it
// while the others wait. Each rank cuts its clients' updates into the other ranks' column ranges, one
// all-to-all exchanges them, each rank puts the K rows of its blocks in client order, and rank 0
// gathers the blocks' results and joins them in block order. The blocks do not depend on the number
// of ranks, so neither does the result.
#pragma once
#include <cstdint>
#include <vector>

#include "comm/communicator.hpp"
#include "core/robust_config.hpp"
#include "robust/aggregator.hpp"
#include "robust/column_blocks.hpp"

namespace fedsilo {

// This rank's kept updates of a round, each row already cut into the ranks' column ranges.
struct ColumnShare {
  std::vector<int> ids;
  std::vector<double> weights;
  std::size_t cols = 0;
  std::size_t width = kColumnBlockWidth;   // the column block width (tests use narrower blocks)
  std::vector<std::vector<float>> toRank;  // per rank: its columns of every kept row, row after row

  // Keeps one client's update (`row`, all n columns) for `ranks` ranks.
  void add(int id, double weight, const std::vector<float>& row, int ranks);
  void clear();
};

// A round's senders and, on rank 0, what the aggregator made of their updates.
struct AggregatedRound {
  std::vector<int> clients;  // the senders in client order (every rank)
  bool aggregated = false;   // false when fewer than `needed` updates arrived
  AggregateResult result;    // rank 0, when aggregated
};

// Collective: every rank's kept updates attacked and aggregated block by block (`share` is consumed).
// `malicious` per client; `needed` the aggregator's least number of rows.
AggregatedRound aggregateByColumns(const Communicator& comm, const RobustConfig& cfg, std::uint64_t seed, int round,
                                   const std::vector<char>& malicious, int needed, ColumnShare& share);

}  // namespace fedsilo
