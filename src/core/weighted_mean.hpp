// Weighted mean over the finite entries of a vector (NaN marks a missing value, e.g. the accuracy of a
// client without a test split). Shared by the fairness summaries (fl) and the reader of a reference
// results file (io), which must agree bit for bit: both compute α-FedAvg's efficiency
// E = Σ_k n_k a_k / Σ_k n_k (Tian et al., 计算机研究与发展 2021).
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

#include "core/types.hpp"

namespace fedsilo {

// Σ w_i x_i / Σ w_i over the i with finite x_i (and i below both lengths), in index order; NaN when
// those weights sum to 0 or less.
inline double finiteWeightedMean(const std::vector<double>& x, const std::vector<double>& w) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < x.size() && i < w.size(); ++i) {
    if (!std::isfinite(x[i])) continue;
    num += w[i] * x[i];
    den += w[i];
  }
  return den > 0.0 ? num / den : kNaN;
}

}  // namespace fedsilo
