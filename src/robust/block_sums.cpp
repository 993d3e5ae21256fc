#include "robust/block_sums.hpp"

#include <algorithm>
#include <utility>

#include "core/config.hpp"
#include "core/error.hpp"

namespace fedsilo {

std::size_t LocalBlocks::localCols() const {
  std::size_t n = 0;
  for (const BlockRef& b : blocks) n += b.width;
  return n;
}

std::vector<double> sumInBlockOrder(const std::vector<double>& all, std::size_t length) {
  std::vector<double> sum(length, 0.0);
  FEDSILO_ASSERT(length == 0 || all.size() % length == 0, "block partials: ", all.size(), " values in blocks of ",
                 length);
  for (std::size_t at = 0; at < all.size(); at += length)
    for (std::size_t i = 0; i < length; ++i) sum[i] += all[at + i];
  return sum;
}

bool aggregatesBySummedBlocks(AggregatorKind aggregator) {
  return aggregator == AggregatorKind::Krum || aggregator == AggregatorKind::MultiKrum ||
         aggregator == AggregatorKind::Geomed || aggregator == AggregatorKind::CenteredClip ||
         aggregator == AggregatorKind::NormClip;
}

AggregateResult aggregateOnBlocks(const AggregatorConfig& cfg, const LocalBlocks& mine,
                                  const std::vector<double>& weights, const std::vector<double>& center,
                                  const JoinPartials& join, BlockSumsWorkspace& ws) {
  switch (cfg.kind) {
    case AggregatorKind::Krum: return krumOnBlocks(cfg, 1, mine, join, ws);
    case AggregatorKind::MultiKrum: return krumOnBlocks(cfg, multiKrumCount(cfg, mine.rows), mine, join, ws);
    case AggregatorKind::Geomed: return geomedOnBlocks(cfg, mine, weights, join, ws);
    case AggregatorKind::CenteredClip: return centeredClipOnBlocks(cfg, mine, weights, center, join, ws);
    case AggregatorKind::NormClip: return normClipOnBlocks(cfg, mine, weights, join, ws);
    default: FEDSILO_ASSERT(false, "fl.aggregator = ", cfg.kind, " does not run by summed blocks");
  }
  return {};
}

AggregateResult aggregateBySummedBlocks(const AggregatorConfig& cfg, const AggregateInput& in, std::size_t width) {
  LocalBlocks all;
  all.rows = in.updates.rows;
  all.cols = in.updates.cols;
  for (std::size_t c0 = 0; c0 < all.cols; c0 += width)
    all.blocks.push_back(BlockRef{&in.updates, c0, std::min(width, all.cols - c0)});
  const JoinPartials alone = [](const std::vector<double>& mine, std::size_t length) {
    return sumInBlockOrder(mine, length);
  };
  BlockSumsWorkspace ws;  // one call: nothing to keep
  AggregateResult r = aggregateOnBlocks(cfg, all, in.weights, in.center, alone, ws);
  r.aggregate = std::move(ws.aggregate);
  return r;
}

std::vector<double> squaredDistancesToPoint(const LocalBlocks& mine, const std::vector<double>& point,
                                            const JoinPartials& join) {
  const auto K = static_cast<std::size_t>(mine.rows);
  std::vector<double> partials;
  partials.reserve(mine.blocks.size() * K);
  std::size_t at = 0;
  for (const BlockRef& b : mine.blocks) {
    for (int k = 0; k < mine.rows; ++k) partials.push_back(squaredDistanceWide(b.row(k), point.data() + at, b.width));
    at += b.width;
  }
  return join(partials, K);
}

void combineLocalRows(const LocalBlocks& mine, const std::vector<double>& coeff, std::vector<double>& out) {
  out.assign(mine.localCols(), 0.0);
  double* z = out.data();
  for (const BlockRef& b : mine.blocks) {
    for (int k = 0; k < mine.rows; ++k) {
      const double c = coeff[static_cast<std::size_t>(k)];
      if (c == 0.0) continue;
      const float* x = b.row(k);
      for (std::size_t i = 0; i < b.width; ++i) z[i] += c * static_cast<double>(x[i]);
    }
    z += b.width;
  }
}

}  // namespace fedsilo
