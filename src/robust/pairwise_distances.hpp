// All pairwise squared distances between the rows of an update matrix, fast and with a proven error
// bound per pair (Krum's scores, robust/krum.cpp). ||x_i - x_j||^2 = ||y_i||^2 + ||y_j||^2 - 2 y_i.y_j
// over centred rows y_k = x_k - c (c the column means), so the Gram matrix Y Y^T gives every distance
// by one GEMM (Eigen's float kernel, a panel of columns at a time, panels summed in double). Centring
// is what makes the subtraction safe: the rows' norms are then of the order of their distances, not of
// their (possibly much larger) common part. The bound covers the float rounding of the centred rows,
// the float GEMM over a panel and the double arithmetic after it, so a decision the bounds settle is
// the one the direct double computation (squaredDistance) would take. Deterministic: a fixed panel
// order and Eigen's single-threaded GEMM on the same shapes.
#pragma once
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

PairwiseDistances pairwiseSquaredDistances(const UpdateMatrix& u);

}  // namespace fedsilo
