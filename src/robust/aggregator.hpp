// Robust aggregators (docs/robustness.md): each combines the K x n matrix of one round's updates
// (rows in client order, core/robust_config.hpp's options) into one update, and says how it used each
// client. One file per aggregator; robust/aggregator_registry.cpp lists them. No MPI: the round driver
// gathers the rows to rank 0 and calls aggregate() there (fl/robust_round.hpp), or shares fixed column
// blocks out among the ranks (robust/column_blocks.hpp, robust/block_sums.hpp), which gives the same
// result. Arithmetic in double, in a fixed order: the result depends only on the matrix, the weights
// and the options.
#pragma once
#include <string>
#include <vector>

#include "core/robust_config.hpp"
#include "robust/update_matrix.hpp"

namespace fedsilo {

struct AggregateResult {
  std::vector<double> aggregate;  // n values
  std::vector<char> selected;     // per row: the row was used at all
  std::vector<double> weight;     // per row: its share in the result (NaN where the aggregator has none)
};

// What an aggregator reads: the updates, the clients' weights (sample counts; aggregators that follow
// an unweighted paper ignore them, docs/robustness.md) and the centre of centered clipping (the last
// round's aggregate; zeros in the first round).
struct AggregateInput {
  const UpdateMatrix& updates;
  const std::vector<double>& weights;
  const std::vector<double>& center;
};

using AggregatorFunction = AggregateResult (*)(const AggregatorConfig& cfg, const AggregateInput& in);

struct AggregatorEntry {
  AggregatorKind kind;
  AggregatorFunction run;
  // Rows the aggregator needs at least, for these options (Krum: 2f + 3).
  int (*minRows)(const AggregatorConfig& cfg);
};

// The table of aggregators (robust/aggregator_registry.cpp).
const std::vector<AggregatorEntry>& aggregatorRegistry();
const AggregatorEntry& findAggregator(AggregatorKind kind);

// Runs cfg.kind on `in` (at least one row; throws std::invalid_argument below the aggregator's minRows).
AggregateResult aggregate(const AggregatorConfig& cfg, const AggregateInput& in);

// The aggregators, one file each.
AggregateResult meanAggregate(const AggregatorConfig& cfg, const AggregateInput& in);
AggregateResult medianAggregate(const AggregatorConfig& cfg, const AggregateInput& in);
AggregateResult trimmedMeanAggregate(const AggregatorConfig& cfg, const AggregateInput& in);
AggregateResult krumAggregate(const AggregatorConfig& cfg, const AggregateInput& in);
AggregateResult multiKrumAggregate(const AggregatorConfig& cfg, const AggregateInput& in);
AggregateResult geomedAggregate(const AggregatorConfig& cfg, const AggregateInput& in);
AggregateResult centeredClipAggregate(const AggregatorConfig& cfg, const AggregateInput& in);
AggregateResult normClipAggregate(const AggregatorConfig& cfg, const AggregateInput& in);

// Trimmed mean: the number cut from each side of K values (floor(beta K)).
int trimmedCount(double beta, int rows);
// Multi-Krum's m for K rows (fl.krum_m, or K - f when 0).
int multiKrumCount(const AggregatorConfig& cfg, int rows);

}  // namespace fedsilo
