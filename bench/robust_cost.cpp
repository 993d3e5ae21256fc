// What each robust aggregator costs at rank 0 per round, against a W1 round (figures, never assertions;
// docs/robustness.md, "Cost"): K updates of the W1 model (MLP 784-200-200-10, 199,210 parameters),
// drawn N(0, 0.01^2) from a keyed stream, each aggregator with its default options (Krum with f = 10),
// the median of the repetitions in thread CPU time. Also the exact reduction of the same K updates
// (ExactSum::addScaled), the mean's cost without robust aggregation.
//
// The denominator, "a W1 round at 2 ranks" with K = 100 silos: W1's 60,000 training samples split
// over the silos, so each rank trains 30,000 samples (938 SGD steps at batch 32) whatever K is. It is
// measured here, in the same process and the same thread CPU time as the aggregators, as 938 times
// the median fused SGD step of the MLP at batch 32 (Model::sgdStep, the step W1's trainer takes). That
// leaves out the round's evaluation (10,000 test images), the gather and the MPI waits, so it is a
// lower bound on the round and the shares printed are upper bounds. A figure given as the first
// argument (seconds of a whole round measured elsewhere) replaces it.
//
// The coordinate-wise aggregators (robust/column_blocks.hpp) and Krum, geomed and centered clipping
// (robust/block_sums.hpp) run by fixed column blocks, shared out among the ranks
// (fl/robust_columns.hpp). For them the bench also times the blocks one rank takes at 1 and at 2 ranks
// (rank 0's share, plus its joining of every block's result or partial sums), from block matrices
// already in place: like the whole-matrix figure, it leaves out the exchange of the rows and of the
// partial sums.
//
//   build/bench/fedsilo_robust_bench [round_seconds (0: measure)] [K (100)] [repetitions (3)]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/config.hpp"
#include "core/exact_sum.hpp"
#include "core/rng.hpp"
#include "nn/presets.hpp"
#include "robust/aggregator.hpp"
#include "robust/block_sums.hpp"
#include "robust/column_blocks.hpp"

#include "thread_clock.hpp"

using namespace fedsilo;

namespace {

template <class F>
double medianSeconds(int reps, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double t0 = threadSeconds();
    f();
    t.push_back(threadSeconds() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// One rank's training in a W1 round at 2 ranks: 30,000 samples at batch 32, in thread CPU seconds.
double w1TrainingSeconds(int reps) {
  constexpr int kBatch = 32, kSteps = (30000 + kBatch - 1) / kBatch;
  auto m = buildModel<float>(ModelConfig{}, InputSpec{Shape{1, 28, 28}, 10, 0});
  Rng init(0, -1, -1, Purpose::Init);
  m->initialize(init);
  m->reserve(kBatch);
  std::vector<float> x(784u * kBatch);
  Rng data(1, -1, -1, Purpose::Misc);
  for (float& v : x) v = static_cast<float>(data.uniform());
  std::vector<std::int32_t> y(kBatch);
  for (int j = 0; j < kBatch; ++j) y[static_cast<std::size_t>(j)] = j % 10;
  constexpr int kInner = 20;
  m->sgdStep(x.data(), y.data(), kBatch, 0.05f);  // warm-up
  return kSteps *
         medianSeconds(std::max(reps, 5),
                       [&] {
                         for (int i = 0; i < kInner; ++i) m->sgdStep(x.data(), y.data(), kBatch, 0.05f);
                       }) /
         kInner;
}

// Rank 0's blocks at `ranks` ranks, each as its own K x width matrix (as the all-to-all leaves them).
std::vector<UpdateMatrix> rankZeroBlocks(const UpdateMatrix& u, int ranks) {
  const ColumnBlocks blocks{u.cols, kColumnBlockWidth};
  const auto [first, last] = blocks.ofRank(0, ranks);
  std::vector<UpdateMatrix> mine;
  for (std::size_t b = first; b < last; ++b) {
    UpdateMatrix m(u.rows, blocks.size(b));
    for (int k = 0; k < u.rows; ++k) std::copy_n(u.row(k) + blocks.begin(b), m.cols, m.row(k));
    mine.push_back(std::move(m));
  }
  return mine;
}

// Rank 0's part of a round aggregated by column blocks at `ranks` ranks: its blocks, then every
// block's result joined (the other ranks' results are copies of its own here: same sizes, same work).
double rankZeroBlocksSeconds(int reps, const AggregatorConfig& cfg, const UpdateMatrix& u,
                             const std::vector<double>& weights, int ranks) {
  const ColumnBlocks blocks{u.cols, kColumnBlockWidth};
  std::vector<UpdateMatrix> mine = rankZeroBlocks(u, ranks);
  RobustConfig robust;
  robust.aggregator = cfg;
  const AttackRound none;
  volatile double sink = 0.0;
  return medianSeconds(reps, [&] {
    std::vector<AggregateResult> results;
    for (UpdateMatrix& m : mine) results.push_back(attackAndAggregateBlock(robust, none, m, weights));
    std::vector<AggregateResult> all;
    for (std::size_t b = 0; b < blocks.count(); ++b) all.push_back(results[b % results.size()]);
    sink = sink + combineColumnBlocks(all).aggregate[0];
  });
}

// The same for Krum, geomed and centered clipping (robust/block_sums.hpp): rank 0's blocks, their
// partial sums joined with the other ranks' (copies of its own here), without the exchange's waits.
double rankZeroSummedBlocksSeconds(int reps, const AggregatorConfig& cfg, const UpdateMatrix& u,
                                   const std::vector<double>& weights, int ranks) {
  const std::vector<UpdateMatrix> mine = rankZeroBlocks(u, ranks);
  LocalBlocks local;
  local.rows = u.rows;
  local.cols = u.cols;
  for (const UpdateMatrix& m : mine) local.blocks.push_back(BlockRef{&m, 0, m.cols});
  BlockSumsWorkspace ws;  // kept across the repetitions, as each rank keeps it across rounds
  const JoinPartials join = [ranks, &ws](const std::vector<double>& partials, std::size_t length) {
    std::vector<double>& all = ws.gathered;  // as the all-gather fills the kept buffer
    all.clear();
    for (int r = 0; r < ranks; ++r) all.insert(all.end(), partials.begin(), partials.end());
    return sumInBlockOrder(all, length);
  };
  const std::vector<double> center(local.localCols(), 0.0);
  volatile double sink = 0.0;
  return medianSeconds(reps, [&] {
    aggregateOnBlocks(cfg, local, weights, center, join, ws);
    sink = sink + ws.aggregate[0];
  });
}

}  // namespace

int main(int argc, char** argv) {
  const double given = argc > 1 ? std::atof(argv[1]) : 0.0;
  const int K = argc > 2 ? std::atoi(argv[2]) : 100;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 3;
  const std::size_t n = 784 * 200 + 200 + 200 * 200 + 200 + 200 * 10 + 10;  // 199,210
  UpdateMatrix u(K, n);
  Rng rng(1, -1, 0, Purpose::Misc);
  for (float& x : u.values) x = static_cast<float>(0.01 * rng.normal());
  std::vector<double> weights(static_cast<std::size_t>(K), 1.0);
  std::vector<double> center(n, 0.0);
  const double roundSeconds = given > 0.0 ? given : w1TrainingSeconds(reps);
  std::printf("robust aggregators: K = %d updates of %zu parameters, median of %d, thread CPU time\n", K, n, reps);
  if (given > 0.0)
    std::printf("W1 round = %.3f s (given)\n", roundSeconds);
  else
    std::printf(
        "W1 round at 2 ranks >= %.3f s: one rank's training, 30,000 samples at batch 32, measured here "
        "(no evaluation, gather or waits: the shares are upper bounds)\n",
        roundSeconds);
  std::printf("%-16s %12s %10s %16s %16s\n", "aggregator", "seconds", "of round", "blocks, 1 rank", "blocks, 2 ranks");
  ExactSum acc(n);
  const double exact = medianSeconds(reps, [&] {
    acc.clear();
    for (int k = 0; k < K; ++k) acc.addScaled(0, u.row(k), n, weights[static_cast<std::size_t>(k)]);
  });
  std::printf("%-16s %12.4f %9.1f%%\n", "exact reduction", exact, 100.0 * exact / roundSeconds);
  for (const AggregatorEntry& e : aggregatorRegistry()) {
    AggregatorConfig cfg;
    cfg.kind = e.kind;
    cfg.byzantine = 10;
    volatile double sink = 0.0;
    const double s = medianSeconds(reps, [&] {
      sink = sink + aggregate(cfg, AggregateInput{u, weights, center}).aggregate[0];
    });
    const bool byColumns = aggregatesByColumns(e.kind), summed = aggregatesBySummedBlocks(e.kind);
    if (!byColumns && !summed) {
      std::printf("%-16s %12.4f %9.1f%% %16s %16s\n", nameOf(e.kind), s, 100.0 * s / roundSeconds, "-", "-");
      continue;
    }
    const auto blocksSeconds = byColumns ? &rankZeroBlocksSeconds : &rankZeroSummedBlocksSeconds;
    const double one = blocksSeconds(reps, cfg, u, weights, 1);
    const double two = blocksSeconds(reps, cfg, u, weights, 2);
    std::printf("%-16s %12.4f %9.1f%% %8.4f %6.1f%% %8.4f %6.1f%%\n", nameOf(e.kind), s, 100.0 * s / roundSeconds, one,
                100.0 * one / roundSeconds, two, 100.0 * two / roundSeconds);
  }
  return 0;
}
