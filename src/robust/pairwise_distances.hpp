// All pairwise squared distances between the rows of an update matrix, fast and with a proven error
// bound per pair (Krum's scores, robust/krum.cpp). ||x_i - x_j||^2 = ||y_i||^2 + ||y_j||^2 - 2 y_i.y_j
// over centred rows y_k = x_k - c (c about the column means), so the Gram matrix Y Y^T gives every distance
// (robust/gram_kernel.hpp: float register tiles over a panel of columns, panels summed in double).
// Centring is what makes the subtraction safe: the rows' norms are then of the order of their
// distances, not of their (possibly much larger) common part. The bound covers the float rounding of
// the centred rows, the kernel's float sums and the double arithmetic after them, so a decision the
// bounds settle is the one the direct double computation (squaredDistance, summed block by block)
// would take.
//
// By column blocks (robust/column_blocks.hpp): the Gram matrix is a sum over coordinates, so each
// fixed-width block of columns gives its partial Gram matrix (its panels summed in double) and the
// partials are added in block order. The blocks, not the ranks that computed them, fix the order, so
// the distances are the same whether one process computes every block or the ranks share them out
// (robust/block_sums.hpp). Deterministic: a fixed panel and block order and a kernel whose bits depend
// on the rows only.
#pragma once
#include <cstddef>
#include <vector>

#include "robust/update_matrix.hpp"

namespace fedsilo {

struct PairwiseDistances {
  int rows = 0;
  std::vector<double> squared;  // rows x rows, symmetric, zero diagonal
  std::vector<double> error;    // rows x rows: |squared - squaredDistance(row i, row j)| <= error
  double at(int i, int j) const {
    return squared[static_cast<std::size_t>(i) * static_cast<std::size_t>(rows) + static_cast<std::size_t>(j)];
  }
  double errorAt(int i, int j) const {
    return error[static_cast<std::size_t>(i) * static_cast<std::size_t>(rows) + static_cast<std::size_t>(j)];
  }
};

// Columns [c0, c0 + width) of every row: the lower triangle of their centred Gram matrix, packed row
// by row (entry (i, j), j <= i, at i (i + 1) / 2 + j), K (K + 1) / 2 doubles.
std::vector<double> partialGram(const UpdateMatrix& u, std::size_t c0, std::size_t width);

// partialGram for one block after another, appended to `out`, with one panel buffer for them all.
class PartialGrams {
 public:
  void append(const UpdateMatrix& u, std::size_t c0, std::size_t width, std::vector<double>& out);

 private:
  std::vector<float> panel_;   // the centred panel
  std::vector<float> centre_;  // its centre
};

// The distances and their bounds from the sum of every block's partialGram (in block order) over
// `cols` columns in all.
PairwiseDistances distancesFromGram(const std::vector<double>& gram, int rows, std::size_t cols);

}  // namespace fedsilo
