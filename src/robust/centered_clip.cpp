// centered_clip (Karimireddy, He, Jaggi, ICML 2021): from the centre v (the previous round's
// aggregate, which plays the part of the paper's server momentum; zeros in the first round), repeat
// fl.clip_iterations times v <- v + sum_k w_k (x_k - v) min(1, tau / ||x_k - v||) with the weights
// normalised to sum 1 (the paper's 1/n when the clients are equally weighted). A row's weight is its
// clip factor min(1, tau / ||x_k - v||) in the last iteration.
#include <algorithm>
#include <cmath>

#include "robust/aggregator.hpp"

namespace fedsilo {

namespace {

// ||x_k - v|| of every row, a column block at a time (v's block stays in cache across the rows).
std::vector<double> distancesTo(const UpdateMatrix& u, const std::vector<double>& v) {
  const auto K = static_cast<std::size_t>(u.rows);
  std::vector<double> squared(K, 0.0);
  for (std::size_t c0 = 0; c0 < u.cols; c0 += kColumnBlock) {
    const std::size_t width = std::min(u.cols - c0, kColumnBlock);
    for (std::size_t k = 0; k < K; ++k)
      squared[k] += squaredDistanceWide(u.row(static_cast<int>(k)) + c0, v.data() + c0, width);
  }
  for (double& d : squared) d = std::sqrt(d);
  return squared;
}

// v += sum_k c_k (x_k - v), rows in order for each value, a column block at a time.
void stepTowards(const UpdateMatrix& u, const std::vector<double>& coeff, std::vector<double>& v) {
  std::vector<double> step(kColumnBlock);
  for (std::size_t c0 = 0; c0 < u.cols; c0 += kColumnBlock) {
    const std::size_t width = std::min(u.cols - c0, kColumnBlock);
    const double* vb = v.data() + c0;
    std::fill(step.begin(), step.end(), 0.0);
    for (int k = 0; k < u.rows; ++k) {
      const double c = coeff[static_cast<std::size_t>(k)];
      const float* x = u.row(k) + c0;
      for (std::size_t i = 0; i < width; ++i) step[i] += c * (static_cast<double>(x[i]) - vb[i]);
    }
    for (std::size_t i = 0; i < width; ++i) v[c0 + i] += step[i];
  }
}

}  // namespace

AggregateResult centeredClipAggregate(const AggregatorConfig& cfg, const AggregateInput& in) {
  const auto K = static_cast<std::size_t>(in.updates.rows);
  const std::size_t n = in.updates.cols;
  double total = 0.0;
  for (std::size_t k = 0; k < K; ++k) total += in.weights[k];
  AggregateResult r;
  r.selected.assign(K, 1);
  r.weight.assign(K, 1.0);
  std::vector<double> v = in.center.empty() ? std::vector<double>(n, 0.0) : in.center;
  std::vector<double> coeff(K);
  for (int l = 0; l < cfg.clipIterations; ++l) {
    const std::vector<double> norm = distancesTo(in.updates, v);
    for (std::size_t k = 0; k < K; ++k) {
      r.weight[k] = norm[k] > cfg.clipTau ? cfg.clipTau / norm[k] : 1.0;
      coeff[k] = in.weights[k] / total * r.weight[k];
    }
    stepTowards(in.updates, coeff, v);
  }
  r.aggregate = std::move(v);
  return r;
}

}  // namespace fedsilo
