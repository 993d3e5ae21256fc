#include "fl/fairness.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fedsilo {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

std::vector<double> finiteValues(const std::vector<double>& x) {
  std::vector<double> out;
  out.reserve(x.size());
  for (double v : x)
    if (std::isfinite(v)) out.push_back(v);
  return out;
}

double mean(const std::vector<double>& x) {
  const auto v = finiteValues(x);
  if (v.empty()) return kNaN;
  double s = 0.0;
  for (double a : v) s += a;
  return s / static_cast<double>(v.size());
}

double median(std::vector<double> x) {
  x = finiteValues(x);
  if (x.empty()) return kNaN;
  std::sort(x.begin(), x.end());
  const std::size_t n = x.size();
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

double populationVariance(const std::vector<double>& x) {
  const auto v = finiteValues(x);
  if (v.empty()) return kNaN;
  const double m = mean(v);
  double s = 0.0;
  for (double a : v) s += (a - m) * (a - m);
  return s / static_cast<double>(v.size());
}

double worstFraction(std::vector<double> x, double fraction) {
  x = finiteValues(x);
  if (x.empty()) return kNaN;
  std::sort(x.begin(), x.end());
  const std::size_t n = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(fraction * x.size())));
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i) s += x[i];
  return s / static_cast<double>(n);
}

double bestFraction(std::vector<double> x, double fraction) {
  x = finiteValues(x);
  if (x.empty()) return kNaN;
  std::sort(x.begin(), x.end(), std::greater<double>());
  const std::size_t n = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(fraction * x.size())));
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i) s += x[i];
  return s / static_cast<double>(n);
}

double jainIndex(const std::vector<double>& x) {
  const auto v = finiteValues(x);
  if (v.empty()) return kNaN;
  double s = 0.0, s2 = 0.0;
  for (double a : v) {
    s += a;
    s2 += a * a;
  }
  if (s2 == 0.0) return kNaN;
  return s * s / (static_cast<double>(v.size()) * s2);
}

double efficiency(const std::vector<double>& accuracy, const std::vector<double>& weights) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < accuracy.size() && i < weights.size(); ++i) {
    if (!std::isfinite(accuracy[i])) continue;
    num += weights[i] * accuracy[i];
    den += weights[i];
  }
  return den > 0.0 ? num / den : kNaN;
}

AccuracySummary summarize(const std::vector<double>& a) {
  AccuracySummary s;
  s.mean = mean(a);
  s.median = median(a);
  s.worst10 = worstFraction(a);
  s.best10 = bestFraction(a);
  s.variance = populationVariance(a);
  s.jain = jainIndex(a);
  s.count = static_cast<int>(finiteValues(a).size());
  return s;
}

}  // namespace fedsilo
