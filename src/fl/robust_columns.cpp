#include "fl/robust_columns.hpp"

#include <algorithm>
#include <numeric>

#include "comm/reused_buffers.hpp"
#include "core/error.hpp"
#include "robust/block_sums.hpp"
#include "robust/column_blocks.hpp"

namespace fedsilo {

namespace {

// The column range [begin, end) of rank r's blocks.
std::pair<std::size_t, std::size_t> rankColumns(const ColumnBlocks& blocks, int r, int ranks) {
  const auto [first, last] = blocks.ofRank(r, ranks);
  return {std::min(blocks.begin(first), blocks.cols), std::min(blocks.begin(last), blocks.cols)};
}

// This rank's blocks as K x width matrices in client order into `out` (its matrices' buffers reused),
// from the all-to-all's pieces (`received`: every sender's rows over this rank's columns, senders in
// rank order as in the gathered ids).
void assembleBlocks(const ColumnBlocks& blocks, std::size_t first, std::size_t last,
                    const std::vector<std::size_t>& order, const std::vector<float>& received,
                    std::vector<UpdateMatrix>& out) {
  const std::size_t c0 = blocks.begin(first);
  const std::size_t width = last > first ? blocks.begin(last - 1) + blocks.size(last - 1) - c0 : 0;
  out.resize(last - first);
  for (std::size_t b = first; b < last; ++b) {
    UpdateMatrix& m = out[b - first];
    m.rows = static_cast<int>(order.size());
    m.cols = blocks.size(b);
    m.values.resize(order.size() * m.cols);  // every value written below
    for (std::size_t r = 0; r < order.size(); ++r)
      std::copy_n(received.data() + order[r] * width + (blocks.begin(b) - c0), m.cols, m.row(static_cast<int>(r)));
  }
}

// Rank 0: every block's result, from the ranks' blocks gathered in rank (hence block) order.
std::vector<AggregateResult> gatherBlockResults(const Communicator& comm, const ColumnBlocks& blocks, std::size_t K,
                                                const std::vector<AggregateResult>& mine) {
  std::vector<double> aggregate, weight;
  std::vector<char> selected;
  for (const AggregateResult& r : mine) {
    aggregate.insert(aggregate.end(), r.aggregate.begin(), r.aggregate.end());
    weight.insert(weight.end(), r.weight.begin(), r.weight.end());
    selected.insert(selected.end(), r.selected.begin(), r.selected.end());
  }
  aggregate = comm.gatherv(aggregate, 0);
  weight = comm.gatherv(weight, 0);
  selected = comm.gatherv(selected, 0);
  std::vector<AggregateResult> all;
  if (!comm.isRoot()) return all;
  for (std::size_t b = 0; b < blocks.count(); ++b) {
    AggregateResult r;
    const auto at = static_cast<std::ptrdiff_t>(blocks.begin(b));
    r.aggregate.assign(aggregate.begin() + at, aggregate.begin() + at + static_cast<std::ptrdiff_t>(blocks.size(b)));
    const auto rowsAt = static_cast<std::ptrdiff_t>(b * K);
    r.weight.assign(weight.begin() + rowsAt, weight.begin() + rowsAt + static_cast<std::ptrdiff_t>(K));
    r.selected.assign(selected.begin() + rowsAt, selected.begin() + rowsAt + static_cast<std::ptrdiff_t>(K));
    all.push_back(std::move(r));
  }
  return all;
}

// Krum, geomed, centered and norm clipping (robust/block_sums.hpp) on this rank's blocks `mine` (the blocks
// [first, ...) of `blocks`, attacked here): the partial sums joined by an all-gather (every rank's
// blocks in rank, hence block, order), the aggregate's columns gathered to rank 0. `center` as in
// aggregateByColumns.
AggregateResult aggregateSummedBlocks(const Communicator& comm, const AggregatorConfig& cfg, const ColumnBlocks& blocks,
                                      std::size_t first, std::vector<UpdateMatrix>& mine,
                                      const std::vector<double>& weights, std::vector<double>& center,
                                      BlockSumsWorkspace& ws) {
  LocalBlocks local;
  local.rows = static_cast<int>(weights.size());
  local.cols = blocks.cols;
  for (const UpdateMatrix& m : mine) local.blocks.push_back(BlockRef{&m, 0, m.cols});
  const std::size_t c0 = std::min(blocks.begin(first), blocks.cols), c1 = c0 + local.localCols();
  std::vector<double> myCenter;
  if (cfg.kind == AggregatorKind::CenteredClip && center.size() == blocks.cols)
    myCenter.assign(center.begin() + static_cast<std::ptrdiff_t>(c0), center.begin() + static_cast<std::ptrdiff_t>(c1));
  const JoinPartials join = [&comm, &ws](const std::vector<double>& partials, std::size_t length) {
    allgathervInto(comm, partials, ws.gathered);
    return sumInBlockOrder(ws.gathered, length);
  };
  AggregateResult r = aggregateOnBlocks(cfg, local, weights, myCenter, join, ws);
  if (cfg.kind == AggregatorKind::CenteredClip) {  // the next round's centre: this rank's columns of it
    if (center.size() != blocks.cols) center.assign(blocks.cols, 0.0);  // a first round, or other columns
    std::copy(ws.aggregate.begin(), ws.aggregate.end(), center.begin() + static_cast<std::ptrdiff_t>(c0));
  }
  r.aggregate = comm.gatherv(ws.aggregate, 0);
  if (cfg.kind == AggregatorKind::CenteredClip && comm.isRoot()) center = r.aggregate;
  return r;
}

}  // namespace

void ColumnShare::add(int id, double weight, const std::vector<float>& row, int ranks) {
  ids.push_back(id);
  weights.push_back(weight);
  cols = row.size();
  toRank.resize(static_cast<std::size_t>(ranks));
  const ColumnBlocks blocks{cols, width};
  for (int d = 0; d < ranks; ++d) {
    const auto [c0, c1] = rankColumns(blocks, d, ranks);
    auto& out = toRank[static_cast<std::size_t>(d)];
    out.insert(out.end(), row.begin() + static_cast<std::ptrdiff_t>(c0), row.begin() + static_cast<std::ptrdiff_t>(c1));
  }
}

void ColumnShare::clear() {
  ids.clear();
  weights.clear();
  for (std::vector<float>& piece : toRank) piece.clear();  // their capacity kept for the next round
}

AggregatedRound aggregateByColumns(const Communicator& comm, const RobustConfig& cfg, std::uint64_t seed, int round,
                                   const std::vector<char>& malicious, int needed, ColumnShare& share,
                                   std::vector<double>& center) {
  const int ranks = comm.size();
  share.toRank.resize(static_cast<std::size_t>(ranks));  // a rank without updates sends nothing
  const std::vector<int> ids = comm.allgatherv(share.ids);
  const std::vector<double> weights = comm.allgatherv(share.weights);
  const ColumnBlocks blocks{static_cast<std::size_t>(comm.allreduceMax(static_cast<std::int64_t>(share.cols))),
                            share.width};
  FEDSILO_ASSERT(share.ids.empty() || share.cols == blocks.cols, "robust columns: this rank's rows have ", share.cols,
                 " columns, another rank's ", blocks.cols);
  alltoallvInto(comm, share.toRank, share.received);
  const std::vector<float>& received = share.received;
  share.clear();
  std::vector<std::size_t> order(ids.size());  // gathered position of each client-ordered row
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ids[a] < ids[b]; });
  AggregatedRound out;
  AttackRound attack;
  attack.seed = seed;
  attack.round = round;
  std::vector<double> ordered;
  for (std::size_t g : order) {
    out.clients.push_back(ids[g]);
    attack.clients.push_back(ids[g]);
    attack.malicious.push_back(malicious[static_cast<std::size_t>(ids[g])]);
    ordered.push_back(weights[g]);
  }
  out.aggregated = !ids.empty() && static_cast<int>(ids.size()) >= needed;
  if (!out.aggregated) return out;
  const auto [first, last] = blocks.ofRank(comm.rank(), ranks);
  std::vector<UpdateMatrix>& mine = share.blocks;
  assembleBlocks(blocks, first, last, order, received, mine);
  if (aggregatesBySummedBlocks(cfg.aggregator.kind)) {
    for (UpdateMatrix& m : mine) applyAttack(cfg.attack, attack, m);
    out.result = aggregateSummedBlocks(comm, cfg.aggregator, blocks, first, mine, ordered, center, share.scratch);
    return out;
  }
  std::vector<AggregateResult> results;
  for (UpdateMatrix& m : mine) results.push_back(attackAndAggregateBlock(cfg, attack, m, ordered));
  out.result = combineColumnBlocks(gatherBlockResults(comm, blocks, ids.size(), results));
  return out;
}

}  // namespace fedsilo
