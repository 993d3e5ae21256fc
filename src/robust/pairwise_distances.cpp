#include "robust/pairwise_distances.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "robust/gram_kernel.hpp"

namespace fedsilo {

namespace {

// Columns c0 .. c0 + width of every row of u, minus a centre c, into `panel` (K rows of
// gramPaddedWidth(width) floats, zero past width). c is the column means in float: the distances do not
// depend on c, only the size of the centred values does, and the float subtraction is the exact
// difference rounded once, which the bound counts.
void centredPanel(const UpdateMatrix& u, std::size_t c0, std::size_t width, std::vector<float>& centre,
                  std::vector<float>& panel) {
  const int K = u.rows;
  const std::size_t stride = gramPaddedWidth(width);
  centre.assign(width, 0.0f);
  for (int k = 0; k < K; ++k) {
    const float* x = u.row(k) + c0;
    for (std::size_t l = 0; l < width; ++l) centre[l] += x[l];
  }
  const auto rows = static_cast<float>(K);
  for (std::size_t l = 0; l < width; ++l) centre[l] /= rows;
  panel.resize(static_cast<std::size_t>(K) * stride);
  for (int k = 0; k < K; ++k) {
    const float* x = u.row(k) + c0;
    float* y = panel.data() + static_cast<std::size_t>(k) * stride;
    for (std::size_t l = 0; l < width; ++l) y[l] = x[l] - centre[l];
    std::fill(y + width, y + stride, 0.0f);
  }
}

}  // namespace

void PartialGrams::append(const UpdateMatrix& u, std::size_t c0, std::size_t width, std::vector<double>& out) {
  const int K = u.rows;
  const std::size_t at = out.size();
  out.resize(at + static_cast<std::size_t>(K) * static_cast<std::size_t>(K + 1) / 2, 0.0);
  // Panels of the kernel's widest call, each centred and rounded to float, their float sums added in double.
  for (std::size_t p = 0; p < width; p += gramMaxColumns()) {
    const std::size_t w = std::min(gramMaxColumns(), width - p);
    centredPanel(u, c0 + p, w, centre_, panel_);
    addLowerGram(panel_.data(), K, gramPaddedWidth(w), w, out.data() + at);
  }
}

std::vector<double> partialGram(const UpdateMatrix& u, std::size_t c0, std::size_t width) {
  std::vector<double> packed;
  PartialGrams().append(u, c0, width, packed);
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
  // Error bound. Rounding the centred values to float moves each row by at most u ||y_i|| (u = 2^-24,
  // y_i = x_i - c exactly); the Gram kernel's float sums err by at most gamma = m u / (1 - m u) times
  // sum |y_i y_j| <= ||y_i|| ||y_j||, m = kGramFloatRoundings (robust/gram_kernel.hpp; its sums added in
  // double add a relative 2^-53-sized term, as does the direct computation the bound is against). With
  // S = ||y_i|| + ||y_j||, the computed ||y_i||^2 + ||y_j||^2 - 2 y_i.y_j is within (gamma + 3u) S^2 of
  // the exact squared distance, and the direct double computation within n 2^-53 of it; twice that
  // covers every smaller term.
  const double unit = std::ldexp(1.0, -24);
  const double m = kGramFloatRoundings;
  const double gamma = m * unit / (1.0 - m * unit);
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
