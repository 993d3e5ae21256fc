// krum and multi_krum (Blanchard, El Mhamdi, Guerraoui, Stainer, NeurIPS 2017). Each update's score
// is the sum of its squared distances to its K - f - 2 nearest other updates; Krum returns the update
// of least score, Multi-Krum the unweighted mean of the m updates of least scores (ties: lower row).
// Needs K >= 2f + 3 (the paper's condition n > 2f + 2).
//
// Speed with the direct computation's selection: every distance comes from one Gram matrix
// (robust/pairwise_distances.hpp) with a bound on its error, which gives each score an interval. Rows
// whose interval settles whether they are among the m least are decided by it; the others (those near
// the cut) get their scores recomputed from direct double distances (squaredDistance), exactly as the
// reference computation does, and the cut is made among them. So the selection is the one the direct
// O(K^2 n) double computation makes, at the cost of one float Gram matrix plus a few rows.
//
// By column blocks (robust/block_sums.hpp): the Gram matrix and the direct distances are sums over
// the columns, so each block gives its partial Gram matrix and, for the rows near the cut, its partial
// direct distances, both summed in block order; every process then holds the same distances and makes
// the same choice, and each block averages its own columns of the chosen rows. The reference the
// selection equals is thus the direct double computation with its sums taken block by block.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "robust/block_sums.hpp"
#include "robust/column_blocks.hpp"
#include "robust/pairwise_distances.hpp"

namespace fedsilo {

namespace {

// The sum of the `neighbours` least of `others` (reordered).
double sumOfLeast(std::vector<double>& others, std::size_t neighbours) {
  std::nth_element(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(neighbours), others.end());
  return std::accumulate(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(neighbours), 0.0);
}

// Each row's score interval [lo, hi] from the Gram distances: the k-th least of perturbed values is
// within the largest perturbation of the k-th least of the exact ones, so the score is within
// neighbours x (row's largest error), plus the rounding of the two sums.
struct ScoreInterval {
  double lo, hi;
};

std::vector<ScoreInterval> scoreIntervals(const PairwiseDistances& d, std::size_t neighbours) {
  const int K = d.rows;
  std::vector<ScoreInterval> out(static_cast<std::size_t>(K));
  std::vector<double> others;
  for (int i = 0; i < K; ++i) {
    others.clear();
    double worst = 0.0;
    for (int j = 0; j < K; ++j) {
      if (j == i) continue;
      others.push_back(d.at(i, j));
      worst = std::max(worst, d.errorAt(i, j));
    }
    const double score = sumOfLeast(others, neighbours);
    const auto q = static_cast<double>(neighbours);
    const double margin = q * worst * (1.0 + 1e-12) + 4.0 * q * std::ldexp(1.0, -53) * (score + q * worst);
    out[static_cast<std::size_t>(i)] = {score - margin, score + margin};
  }
  return out;
}

// The rows the Gram distances' score intervals settle: chosen (surely among the m least) or undecided
// (near the cut); the rest are surely not chosen.
struct KrumCut {
  std::vector<char> chosen;
  std::vector<int> undecided;
  int in = 0;  // rows chosen so far
};

KrumCut cutByIntervals(const std::vector<ScoreInterval>& s, int m) {
  const auto K = static_cast<int>(s.size());
  KrumCut cut;
  cut.chosen.assign(static_cast<std::size_t>(K), 0);
  // Row i is surely among the m if fewer than m others may precede it, surely not if m others surely do.
  for (int i = 0; i < K; ++i) {
    int mayPrecede = 0, surelyPrecede = 0;
    for (int j = 0; j < K; ++j) {
      if (j == i) continue;
      const ScoreInterval &a = s[static_cast<std::size_t>(i)], &b = s[static_cast<std::size_t>(j)];
      mayPrecede += a.hi < b.lo ? 0 : 1;  // also when a bound is NaN: then nothing is settled
      surelyPrecede += b.hi < a.lo ? 1 : 0;
    }
    if (mayPrecede < m) {
      cut.chosen[static_cast<std::size_t>(i)] = 1;
      ++cut.in;
    } else if (surelyPrecede < m) {
      cut.undecided.push_back(i);
    }
  }
  return cut;
}

// The undecided rows' direct squared distances to every row (|undecided| x K, row i's own 0), each
// block's squaredDistance summed in block order. `partials`: room for the blocks' partials.
std::vector<double> directDistances(const LocalBlocks& mine, const std::vector<int>& undecided,
                                    const JoinPartials& join, std::vector<double>& partials) {
  const auto K = static_cast<std::size_t>(mine.rows);
  const std::size_t length = undecided.size() * K;
  partials.assign(mine.blocks.size() * length, 0.0);
  double* out = partials.data();
  // Each group of rows j is read once per block for every undecided row (the block does not stay in
  // cache between two passes over it); four rows at a time, with the same bits as one by one.
  for (const BlockRef& b : mine.blocks) {
    int j = 0;
    for (; j + 4 <= mine.rows; j += 4) {
      const float* const others[4] = {b.row(j), b.row(j + 1), b.row(j + 2), b.row(j + 3)};
      for (std::size_t u = 0; u < undecided.size(); ++u) {
        double d[4];
        squaredDistances4(b.row(undecided[u]), others, b.width, d);
        for (int r = 0; r < 4; ++r) out[u * K + static_cast<std::size_t>(j + r)] = j + r == undecided[u] ? 0.0 : d[r];
      }
    }
    for (; j < mine.rows; ++j)
      for (std::size_t u = 0; u < undecided.size(); ++u)
        out[u * K + static_cast<std::size_t>(j)] =
            j == undecided[u] ? 0.0 : squaredDistance(b.row(undecided[u]), b.row(j), b.width);
    out += length;
  }
  return join(partials, length);
}

// The m rows of least score (ties: lower row), as the direct computation chooses them.
std::vector<char> leastScores(const LocalBlocks& mine, int f, int m, const JoinPartials& join, BlockSumsWorkspace& ws) {
  const int K = mine.rows;
  if (m >= K) return std::vector<char>(static_cast<std::size_t>(K), 1);
  const std::size_t length = static_cast<std::size_t>(K) * static_cast<std::size_t>(K + 1) / 2;
  ws.partials.clear();
  ws.partials.reserve(mine.blocks.size() * length);
  for (const BlockRef& b : mine.blocks) ws.grams.append(*b.matrix, b.c0, b.width, ws.partials);
  const std::vector<double> gram = join(ws.partials, length);
  const auto neighbours = static_cast<std::size_t>(K - f - 2);
  KrumCut cut = cutByIntervals(scoreIntervals(distancesFromGram(gram, K, mine.cols), neighbours), m);
  if (cut.undecided.empty()) return cut.chosen;
  // The chosen rows are a prefix of the order (score, row), so the rest of the m are the first of the
  // undecided rows in that order, by their direct scores.
  const std::vector<double> direct = directDistances(mine, cut.undecided, join, ws.partials);
  std::vector<std::pair<double, int>> ranked;
  std::vector<double> others;
  for (std::size_t u = 0; u < cut.undecided.size(); ++u) {
    const int i = cut.undecided[u];
    others.clear();
    for (int j = 0; j < K; ++j)
      if (j != i) others.push_back(direct[u * static_cast<std::size_t>(K) + static_cast<std::size_t>(j)]);
    ranked.emplace_back(sumOfLeast(others, neighbours), i);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const std::pair<double, int>& a, const std::pair<double, int>& b) { return a.first < b.first; });
  for (int r = 0; r < m - cut.in && r < static_cast<int>(ranked.size()); ++r)
    cut.chosen[static_cast<std::size_t>(ranked[static_cast<std::size_t>(r)].second)] = 1;
  return cut.chosen;
}

}  // namespace

int multiKrumCount(const AggregatorConfig& cfg, int rows) {
  return cfg.krumM > 0 ? std::min(cfg.krumM, rows) : rows - cfg.byzantine;
}

// The m rows of least score, the unweighted mean of their updates.
AggregateResult krumOnBlocks(const AggregatorConfig& cfg, int m, const LocalBlocks& mine, const JoinPartials& join,
                             BlockSumsWorkspace& ws) {
  AggregateResult r;
  r.selected = leastScores(mine, cfg.byzantine, m, join, ws);
  r.weight.assign(r.selected.size(), 0.0);
  for (std::size_t k = 0; k < r.selected.size(); ++k)
    if (r.selected[k]) r.weight[k] = 1.0 / m;
  combineLocalRows(mine, r.weight, ws.aggregate);
  return r;
}

AggregateResult krumAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  return aggregateBySummedBlocks(cfg, in, kColumnBlockWidth);
}

AggregateResult multiKrumAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  return aggregateBySummedBlocks(cfg, in, kColumnBlockWidth);
}

}  // namespace fedsilo
