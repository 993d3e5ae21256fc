// The table of robust aggregators: one explicit list (no self-registering statics).
#include <stdexcept>
#include <string>

#include "core/config.hpp"
#include "core/error.hpp"
#include "robust/aggregator.hpp"

namespace fedsilo {

namespace {

int oneRow(const AggregatorConfig&) { return 1; }
int krumRows(const AggregatorConfig& cfg) { return 2 * cfg.byzantine + 3; }

}  // namespace

const std::vector<AggregatorEntry>& aggregatorRegistry() {
  static const std::vector<AggregatorEntry> table = {
      {AggregatorKind::Mean, &meanAggregate, &oneRow},
      {AggregatorKind::Median, &medianAggregate, &oneRow},
      {AggregatorKind::TrimmedMean, &trimmedMeanAggregate, &oneRow},
      {AggregatorKind::Krum, &krumAggregate, &krumRows},
      {AggregatorKind::MultiKrum, &multiKrumAggregate, &krumRows},
      {AggregatorKind::Geomed, &geomedAggregate, &oneRow},
      {AggregatorKind::CenteredClip, &centeredClipAggregate, &oneRow},
      {AggregatorKind::NormClip, &normClipAggregate, &oneRow},
  };
  return table;
}

const AggregatorEntry& findAggregator(AggregatorKind kind) {
  for (const AggregatorEntry& e : aggregatorRegistry())
    if (e.kind == kind) return e;
  throw std::invalid_argument(fmt("no aggregator ", kind));
}

AggregateResult aggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  const AggregatorEntry& e = findAggregator(cfg.kind);
  if (in.updates.rows < e.minRows(cfg))
    throw std::invalid_argument(fmt("fl.aggregator = ", cfg.kind, " needs at least ", e.minRows(cfg),
                                    " updates in a round, got ", in.updates.rows));
  return e.run(cfg, in);
}

}  // namespace fedsilo
