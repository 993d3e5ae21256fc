#include "robust/pairwise_distances.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/types.hpp"

namespace fedsilo {

namespace {

// Columns per panel: the panel's float dot products run over kPanel terms (their rounding bound is
// gamma(kPanel) below), and K x kPanel floats stay in the second-level cache.
constexpr std::size_t kPanel = 128;

using FloatRows = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Rows c0 .. c0 + width of every row of u, minus their column means (computed in double), into
// `panel` (K x kPanel, zero past width).
void centredPanel(const UpdateMatrix& u, std::size_t c0, std::size_t width, std::vector<double>& mean,
                  FloatRows& panel) {
  const int K = u.rows;
  std::fill(mean.begin(), mean.end(), 0.0);
  for (int k = 0; k < K; ++k) {
    const float* x = u.row(k) + c0;
    for (std::size_t l = 0; l < width; ++l) mean[l] += static_cast<double>(x[l]);
  }
  for (std::size_t l = 0; l < width; ++l) mean[l] /= K;
  for (int k = 0; k < K; ++k) {
    const float* x = u.row(k) + c0;
    float* y = panel.data() + static_cast<std::size_t>(k) * kPanel;
    for (std::size_t l = 0; l < width; ++l) y[l] = static_cast<float>(static_cast<double>(x[l]) - mean[l]);
    std::fill(y + width, y + kPanel, 0.0f);
  }
}

}  // namespace

std::vector<double> partialGram(const UpdateMatrix& u, std::size_t c0, std::size_t width) {
  const int K = u.rows;
  std::vector<double> packed(static_cast<std::size_t>(K) * static_cast<std::size_t>(K + 1) / 2, 0.0);
  if (K == 0 || width == 0) return packed;
  // Lower triangle of the Gram matrix of the centred rows: float per panel, summed in double.
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(K, K);
  Eigen::MatrixXf panelGram(K, K);
  FloatRows panel(K, static_cast<Eigen::Index>(kPanel));
  std::vector<double> mean(kPanel);
  for (std::size_t p = 0; p < width; p += kPanel) {
    centredPanel(u, c0 + p, std::min(kPanel, width - p), mean, panel);
    panelGram.setZero();
    panelGram.selfadjointView<Eigen::Lower>().rankUpdate(panel);
    gram.triangularView<Eigen::Lower>() += panelGram.cast<double>();
  }
  std::size_t at = 0;
  for (int i = 0; i < K; ++i)
    for (int j = 0; j <= i; ++j) packed[at++] = gram(i, j);
  return packed;
}

PairwiseDistances distancesFromGram(const std::vector<double>& gram, int K, std::size_t cols) {
  const auto KK = static_cast<std::size_t>(K) * static_cast<std::size_t>(K);
  PairwiseDistances d;
  d.rows = K;
  d.squared.assign(KK, 0.0);
  d.error.assign(KK, 0.0);
  const auto g = [&](int i, int j) {
    return gram[static_cast<std::size_t>(i) * static_cast<std::size_t>(i + 1) / 2 + static_cast<std::size_t>(j)];
  };
  // Error bound. Rounding the centred values to float moves each row by at most u ||y_i|| (u = 2^-24);
  // a float dot product of kPanel terms errs by at most gamma = kPanel u / (1 - kPanel u) times
  // sum |y_i y_j| <= ||y_i|| ||y_j|| (panels summed in double add a relative 2^-53-sized term, as does
  // the direct computation the bound is against). With S = ||y_i|| + ||y_j||, the computed
  // ||y_i||^2 + ||y_j||^2 - 2 y_i.y_j is within (gamma + 3u) S^2 of the exact squared distance, and
  // the direct double computation within n 2^-53 of it; twice that covers every smaller term.
  const double unit = std::ldexp(1.0, -24);
  const double gamma = static_cast<double>(kPanel) * unit / (1.0 - static_cast<double>(kPanel) * unit);
  const double tail = static_cast<double>(cols) * std::ldexp(1.0, -53);
  const double factor = 2.0 * (gamma + 3.0 * unit + tail);
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < i; ++j) {
      const double squared = std::max(0.0, g(i, i) + g(j, j) - 2.0 * g(i, j));
      const double s = std::sqrt(std::max(0.0, g(i, i))) + std::sqrt(std::max(0.0, g(j, j)));
      const double error = factor * s * s;
      const auto ij = static_cast<std::size_t>(i) * static_cast<std::size_t>(K) + static_cast<std::size_t>(j);
      const auto ji = static_cast<std::size_t>(j) * static_cast<std::size_t>(K) + static_cast<std::size_t>(i);
      d.squared[ij] = d.squared[ji] = squared;
      d.error[ij] = d.error[ji] = std::isfinite(error) ? error : std::numeric_limits<double>::infinity();
    }
  return d;
}

}  // namespace fedsilo
