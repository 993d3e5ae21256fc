// Coordinate-wise aggregators read the update matrix one column (coordinate) at a time; a column is
// strided in the row-major matrix, so the columns are copied out a tile at a time (rows read
// contiguously) into a column-major buffer of doubles.
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

#include "robust/update_matrix.hpp"

namespace fedsilo {

// Calls f(column, values) for every column, in order; `values` holds the column's K values in row
// order and may be reordered by f.
template <class F>
void forEachColumn(const UpdateMatrix& u, F&& f) {
  constexpr std::size_t kTile = 64;
  const auto K = static_cast<std::size_t>(u.rows);
  std::vector<double> tile(kTile * K);
  for (std::size_t c0 = 0; c0 < u.cols; c0 += kTile) {
    const std::size_t width = std::min(kTile, u.cols - c0);
    for (std::size_t k = 0; k < K; ++k) {
      const float* x = u.row(static_cast<int>(k)) + c0;
      for (std::size_t j = 0; j < width; ++j) tile[j * K + k] = static_cast<double>(x[j]);
    }
    for (std::size_t j = 0; j < width; ++j) f(c0 + j, tile.data() + j * K);
  }
}

}  // namespace fedsilo
