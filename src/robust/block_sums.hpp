// The aggregators whose steps need sums over every coordinate, run block by block (docs/robustness.md,
// "Cost"): Krum's pairwise distances, geomed's distances to the current estimate, centered clipping's
// distances to its centre and norm clipping's norms are sums over the columns of the K x n update matrix, and
// everything else they do is either per coordinate (the weighted combinations of rows) or on K values
// (scores, weights, clip factors). So each fixed-width column block (robust/column_blocks.hpp) gives
// its partial sums, the partials are added in block order, and every block then updates its own
// columns. A process holds some of the blocks; `JoinPartials` hands its blocks' partials to the others
// and returns the sum over every block, always in block order, so the result does not depend on which
// process held which block. In one process (the whole matrix) the join just adds its own partials;
// the ranks' join is an exchange (fl/robust_columns.hpp). No MPI here.
#pragma once
#include <cstddef>
#include <functional>
#include <vector>

#include "robust/aggregator.hpp"
#include "robust/pairwise_distances.hpp"

namespace fedsilo {

// Columns [c0, c0 + width) of every row of `matrix`: one column block.
struct BlockRef {
  const UpdateMatrix* matrix = nullptr;
  std::size_t c0 = 0, width = 0;
  const float* row(int k) const { return matrix->row(k) + c0; }
};

// The blocks this process holds, in block order (consecutive blocks of the matrix), and the matrix's
// size.
struct LocalBlocks {
  std::vector<BlockRef> blocks;
  int rows = 0;          // K
  std::size_t cols = 0;  // n, every block's columns together
  std::size_t localCols() const;
};

// Given this process's blocks' partials (`length` doubles per block, block after block), the sum over
// every block of the matrix, added in block order from zero. Collective where processes share blocks:
// every process calls it the same number of times.
using JoinPartials = std::function<std::vector<double>(const std::vector<double>& mine, std::size_t length)>;

// The summed-block aggregators' large buffers, kept by whoever runs them round after round (on each
// rank, fl/robust_columns.hpp's ColumnShare) and passed to every call. Why: a buffer allocated afresh
// in every call has each of its 4 KB pages first touched, a page fault each, in every round; at
// K = 100 these are a few MB (the aggregate's columns; Krum's partial Gram matrix of every block, its
// centred panels and the ranks' all-gather of them), and their page faults cost about as much as the Gram kernel's
// arithmetic. The buffers grow to the largest size asked for and are never shrunk; between calls what they hold means
// nothing, except `aggregate` right after a call.
struct BlockSumsWorkspace {
  std::vector<double> aggregate;  // the result: the aggregate over this process's columns, block after block
  std::vector<double> partials;   // this process's blocks' partial sums, block after block (Krum)
  PartialGrams grams;             // Krum's centred panels
  std::vector<double> gathered;   // for a JoinPartials that exchanges: every process's partials
};

// The sum of `blocks` consecutive vectors of `length` doubles in `all`, in order, from zero.
std::vector<double> sumInBlockOrder(const std::vector<double>& all, std::size_t length);

// Whether fl.aggregator runs by summed blocks (krum, multi_krum, geomed, centered_clip, norm_clip).
bool aggregatesBySummedBlocks(AggregatorKind aggregator);

// cfg.kind on this process's blocks: every row's selected and weight, and in `ws.aggregate` the
// aggregate of its columns only (block after block; the result's own aggregate stays empty). `center`
// is centered clipping's centre over this process's columns (empty: zeros; not ws.aggregate).
AggregateResult aggregateOnBlocks(const AggregatorConfig& cfg, const LocalBlocks& mine,
                                  const std::vector<double>& weights, const std::vector<double>& center,
                                  const JoinPartials& join, BlockSumsWorkspace& ws);

// The whole matrix in one process, cut into blocks of `width` columns (what aggregate() runs, at
// kColumnBlockWidth).
AggregateResult aggregateBySummedBlocks(const AggregatorConfig& cfg, const AggregateInput& in, std::size_t width);

// The algorithms, one file each (krum.cpp, geomed.cpp, centered_clip.cpp, norm_clip.cpp), as
// aggregateOnBlocks.
AggregateResult krumOnBlocks(const AggregatorConfig& cfg, int m, const LocalBlocks& mine, const JoinPartials& join,
                             BlockSumsWorkspace& ws);
AggregateResult geomedOnBlocks(const AggregatorConfig& cfg, const LocalBlocks& mine, const std::vector<double>& weights,
                               const JoinPartials& join, BlockSumsWorkspace& ws);
AggregateResult centeredClipOnBlocks(const AggregatorConfig& cfg, const LocalBlocks& mine,
                                     const std::vector<double>& weights, const std::vector<double>& center,
                                     const JoinPartials& join, BlockSumsWorkspace& ws);
AggregateResult normClipOnBlocks(const AggregatorConfig& cfg, const LocalBlocks& mine,
                                 const std::vector<double>& weights, const JoinPartials& join, BlockSumsWorkspace& ws);

// Shared steps. Every row's squared distance to `point` (this process's columns, block after block),
// summed over every block: the Weiszfeld step's and centered clipping's distances.
std::vector<double> squaredDistancesToPoint(const LocalBlocks& mine, const std::vector<double>& point,
                                            const JoinPartials& join);
// sum_k coeff_k x_k over this process's columns, block after block (combineRows per block).
void combineLocalRows(const LocalBlocks& mine, const std::vector<double>& coeff, std::vector<double>& out);

}  // namespace fedsilo
