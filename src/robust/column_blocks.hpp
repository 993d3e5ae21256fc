// Coordinate-wise aggregation over fixed column blocks (docs/robustness.md, "Cost"). The mean, the
// median and the trimmed mean combine each coordinate (column) of the K x n update matrix on its own,
// and the attacks other than gaussian build each payload coordinate from that coordinate alone, so
// both can run on a block of columns at a time. The blocks have a fixed width, independent of the
// number of ranks: the driver (fl/robust_columns.hpp) hands each rank whole blocks, every block is
// attacked and aggregated here, and combineColumnBlocks joins the blocks' results in block order, so
// the result is the same however the blocks were shared out. No MPI.
#pragma once
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "core/robust_config.hpp"
#include "robust/aggregator.hpp"
#include "robust/attack.hpp"

namespace fedsilo {

// Columns per block: 4096 columns of K = 100 rows (1.6 MB) stay in the second-level cache.
constexpr std::size_t kColumnBlockWidth = 4032;

// Whether this aggregator and this attack work column by column (then the driver may share the
// columns out among ranks).
bool aggregatesByColumns(AggregatorKind aggregator);
bool attacksByColumns(AttackKind attack);

// Fixed-width column blocks of n columns (the last one narrower).
struct ColumnBlocks {
  std::size_t cols = 0;
  std::size_t width = kColumnBlockWidth;
  std::size_t count() const { return width == 0 ? 0 : (cols + width - 1) / width; }
  std::size_t begin(std::size_t b) const { return b * width; }
  std::size_t size(std::size_t b) const { return std::min(width, cols - b * width); }
  // The blocks [first, last) of rank `rank` of `ranks`: consecutive runs of about count() / ranks.
  std::pair<std::size_t, std::size_t> ofRank(int rank, int ranks) const {
    const std::size_t n = count(), r = static_cast<std::size_t>(rank), p = static_cast<std::size_t>(ranks);
    return {n * r / p, n * (r + 1) / p};
  }
};

// Attacks (cfg.attack, when attacksByColumns) and aggregates (cfg.aggregator, when
// aggregatesByColumns) one block: `block` holds the block's columns of the K rows in client order.
AggregateResult attackAndAggregateBlock(const RobustConfig& cfg, const AttackRound& round, UpdateMatrix& block,
                                        const std::vector<double>& weights);

// The whole matrix's result from its blocks' results, in block order: the aggregates side by side; a
// row is selected where any block used it; its weight is the blocks' weights averaged by their
// column counts (the mean's weights are the same in every block; the median has none).
AggregateResult combineColumnBlocks(const std::vector<AggregateResult>& blocks);

}  // namespace fedsilo
