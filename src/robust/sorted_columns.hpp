// The coordinate-wise aggregators' engine: chosen order statistics of every column (coordinate) of
// the update matrix, a tile of columns at a time, by a selection network applied to all the tile's
// columns at once (the compare-exchange of rows i and j is a min and a max over contiguous lanes,
// which the compiler vectorises). The selection network is Batcher's odd-even merge sorting network
// with every comparator removed that cannot reach a wanted output position (about a fifth of them for
// the median of 100), so it selects rather than sorts. It is fixed by K and the positions alone, so
// the result depends only on the values, and exact: the k-th smallest it reports equals any other
// exact method's. Rows past K are not materialised: the network for the next power of two with +inf
// padding at the end never moves a padded value, so the comparators that touch one are dropped.
#pragma once
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "robust/update_matrix.hpp"

namespace fedsilo {

// Batcher's odd-even merge sort comparators (i < j: min to i) for `n` values, padded to a power of two.
inline std::vector<std::pair<int, int>> oddEvenMergeComparators(int n) {
  int size = 1;
  while (size < n) size *= 2;
  std::vector<std::pair<int, int>> out;
  for (int p = 1; p < size; p *= 2)
    for (int k = p; k >= 1; k /= 2)
      for (int j = k % p; j + k < size; j += 2 * k)
        for (int i = 0; i < std::min(k, size - j - k); ++i)
          if ((i + j) / (2 * p) == (i + j + k) / (2 * p) && i + j + k < n) out.emplace_back(i + j, i + j + k);
  return out;
}

// The comparators of oddEvenMergeComparators(n) that the values at `outputs` depend on, in order.
inline std::vector<std::pair<int, int>> selectionComparators(int n, const std::vector<int>& outputs) {
  const std::vector<std::pair<int, int>> all = oddEvenMergeComparators(n);
  std::vector<char> wanted(static_cast<std::size_t>(n), 0);
  for (int p : outputs) wanted[static_cast<std::size_t>(p)] = 1;
  std::vector<std::pair<int, int>> kept;
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    const auto i = static_cast<std::size_t>(it->first), j = static_cast<std::size_t>(it->second);
    if (!wanted[i] && !wanted[j]) continue;
    wanted[i] = wanted[j] = 1;
    kept.push_back(*it);
  }
  std::reverse(kept.begin(), kept.end());
  return kept;
}

// Columns per tile: K x 64 floats stay in the first-level cache for K up to about 150.
constexpr std::size_t kSortedLanes = 64;

// Calls f(c0, width, tile) for consecutive tiles of at most kSortedLanes columns starting at c0, with
// tile[p * kSortedLanes + l] the p-th smallest value of column c0 + l for every p in `outputs`
// (l < width); the other positions hold the column's other values in no particular order.
template <class F>
void forEachSelectedTile(const UpdateMatrix& u, const std::vector<int>& outputs, F&& f) {
  constexpr std::size_t kLanes = kSortedLanes;
  const auto K = static_cast<std::size_t>(u.rows);
  const std::vector<std::pair<int, int>> network = selectionComparators(u.rows, outputs);
  std::vector<float> tile(K * kLanes);
  for (std::size_t c0 = 0; c0 < u.cols; c0 += kLanes) {
    const std::size_t width = std::min(kLanes, u.cols - c0);
    for (std::size_t k = 0; k < K; ++k) {
      std::copy_n(u.row(static_cast<int>(k)) + c0, width, tile.data() + k * kLanes);
      std::fill(tile.data() + k * kLanes + width, tile.data() + (k + 1) * kLanes, 0.0f);
    }
    for (const auto& [i, j] : network) {
      float* a = tile.data() + static_cast<std::size_t>(i) * kLanes;
      float* b = tile.data() + static_cast<std::size_t>(j) * kLanes;
      for (std::size_t l = 0; l < kLanes; ++l) {
        const float x = a[l], y = b[l];
        a[l] = std::min(x, y);
        b[l] = std::max(x, y);
      }
    }
    f(c0, width, static_cast<const float*>(tile.data()));
  }
}

}  // namespace fedsilo
