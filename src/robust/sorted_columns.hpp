// The coordinate-wise aggregators' engine: every column (coordinate) of the update matrix sorted, a
// tile of columns at a time, by Batcher's odd-even merge sorting network applied to all the tile's
// columns at once (the compare-exchange of rows i and j is a min and a max over contiguous lanes,
// which the compiler vectorises). The network is fixed by K alone, so the result depends only on the
// values; sorting is exact, so the median or trimmed sum read from it equals any other exact method's.
// Rows past K are not materialised: the network for the next power of two with +inf padding at the
// end never moves a padded value, so the comparators that touch one are dropped.
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

// Columns per tile: K x 64 floats stay in the first-level cache for K up to about 150.
constexpr std::size_t kSortedLanes = 64;

// Calls f(c0, width, tile) for consecutive tiles of at most kSortedLanes columns starting at c0, with
// tile[k * kSortedLanes + l] the k-th smallest value of column c0 + l (k < K, l < width).
template <class F>
void forEachSortedTile(const UpdateMatrix& u, F&& f) {
  constexpr std::size_t kLanes = kSortedLanes;
  const auto K = static_cast<std::size_t>(u.rows);
  const std::vector<std::pair<int, int>> network = oddEvenMergeComparators(u.rows);
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
