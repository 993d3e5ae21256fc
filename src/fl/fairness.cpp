#include "fl/fairness.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/error.hpp"

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

double clampAccuracy(double a) {
  if (std::isnan(a)) return a;
  return std::min(1.0, std::max(kAccuracyFloor, a));
}

double alphaFairWeight(double accuracy, double alpha) {
  FEDSILO_ASSERT(alpha > 0.0, "alpha = ", alpha);
  return std::pow(clampAccuracy(accuracy), 1.0 / alpha - 1.0);
}

std::vector<double> alphaFairWeights(const std::vector<double>& accuracy, double alpha,
                                     const std::vector<double>& sampleWeights) {
  FEDSILO_ASSERT(alpha > 0.0, "alpha = ", alpha);
  FEDSILO_ASSERT(sampleWeights.empty() || sampleWeights.size() == accuracy.size(), "sample weights ",
                 sampleWeights.size(), " for ", accuracy.size(), " accuracies");
  const std::size_t n = accuracy.size();
  const double beta = 1.0 / alpha;
  // log of the unnormalised weight: (β-1) ln a_k [+ β ln w_k]; normalised with the max subtracted so
  // that β up to 1/τ = 1e10 neither overflows nor underflows the largest term.
  std::vector<double> logw(n, -std::numeric_limits<double>::infinity());
  double top = -std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < n; ++k) {
    if (!std::isfinite(accuracy[k])) continue;
    double l = (beta - 1.0) * std::log(clampAccuracy(accuracy[k]));
    if (!sampleWeights.empty()) {
      if (!(sampleWeights[k] > 0.0)) continue;  // a zero sample weight gives p_k = 0
      l += beta * std::log(sampleWeights[k]);
    }
    logw[k] = l;
    top = std::max(top, l);
  }
  std::vector<double> p(n, 0.0);
  if (!std::isfinite(top)) return p;
  double sum = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    if (!std::isfinite(logw[k])) continue;
    p[k] = std::exp(logw[k] - top);
    sum += p[k];
  }
  for (double& v : p) v /= sum;
  return p;
}

std::vector<double> utilities(const std::vector<double>& accuracy, const std::vector<double>& weights) {
  FEDSILO_ASSERT(accuracy.size() == weights.size());
  std::vector<double> r(accuracy.size(), 0.0);
  for (std::size_t k = 0; k < r.size(); ++k)
    if (std::isfinite(accuracy[k])) r[k] = clampAccuracy(accuracy[k]) * weights[k];
  return r;
}

double alphaEfficiency(const std::vector<double>& accuracy, double alpha, const std::vector<double>& sampleWeights) {
  const std::vector<double> r = utilities(accuracy, alphaFairWeights(accuracy, alpha, sampleWeights));
  if (finiteValues(accuracy).empty()) return kNaN;
  double e = 0.0;
  for (double v : r) e += v;
  return e;
}

double alphaFairness(const std::vector<double>& accuracy, double alpha, const std::vector<double>& sampleWeights) {
  const std::vector<double> p = alphaFairWeights(accuracy, alpha, sampleWeights);
  std::vector<double> r;  // R_k of the clients with a finite accuracy (K counts those only)
  for (std::size_t k = 0; k < accuracy.size(); ++k)
    if (std::isfinite(accuracy[k])) r.push_back(clampAccuracy(accuracy[k]) * p[k]);
  return jainIndex(r);
}

const char* outcomeName(AlphaSearchOutcome o) {
  switch (o) {
    case AlphaSearchOutcome::Converged: return "converged";
    case AlphaSearchOutcome::BelowRange: return "unreachable (target below E(inf), the harmonic mean)";
    case AlphaSearchOutcome::AboveRange: return "unreachable (target above E(tau), about the best accuracy)";
    case AlphaSearchOutcome::NotConverged: return "not converged";
    case AlphaSearchOutcome::NoData: return "no accuracies";
  }
  return "?";
}

std::string AlphaSearchResult::describe() const {
  std::ostringstream os;
  os.precision(8);
  os << "alpha search " << outcomeName(outcome) << ": alpha = " << alpha << ", E(alpha) = " << efficiency
     << ", target E_T = " << target << ", reachable range (E(inf), E(tau)) = (" << rangeLow << ", " << rangeHigh
     << "), " << newtonSteps << " Newton steps, " << bisectionSteps << " bisection steps";
  return os.str();
}

AlphaSearchResult searchAlpha(const std::vector<double>& accuracy, double target, const std::vector<double>& w,
                              const AlphaSearchOptions& opt) {
  FEDSILO_ASSERT(opt.tolerance > 0.0 && opt.step > 0.0 && opt.floor > 0.0 && opt.alpha0 >= opt.floor &&
                 opt.alphaMax > opt.alpha0);
  AlphaSearchResult res;
  res.target = target;
  res.alpha = opt.alpha0;
  std::vector<double> a = finiteValues(accuracy);
  if (a.empty() || !std::isfinite(target)) return res;  // NoData
  std::vector<double> wf;
  if (!w.empty()) {
    FEDSILO_ASSERT(w.size() == accuracy.size());
    for (std::size_t k = 0; k < accuracy.size(); ++k)
      if (std::isfinite(accuracy[k])) wf.push_back(w[k]);
  }
  auto E = [&](double alpha) { return alphaEfficiency(a, alpha, wf); };
  // E(∞): p_k -> 1/a_k / Σ 1/a_j in both variants, so E(∞) = K / Σ_k 1/a_k.
  double inv = 0.0;
  for (double v : a) inv += 1.0 / clampAccuracy(v);
  res.rangeLow = static_cast<double>(a.size()) / inv;
  res.rangeHigh = E(opt.floor);
  const double lam = opt.tolerance;
  auto record = [&](double alpha, double e) {
    res.trace.emplace_back(alpha, e);
    res.alpha = alpha;
    res.efficiency = e;
  };
  if (target <= res.rangeLow - lam) {
    res.outcome = AlphaSearchOutcome::BelowRange;
    res.efficiency = E(opt.alpha0);
    return res;
  }
  if (target >= res.rangeHigh + lam) {
    res.outcome = AlphaSearchOutcome::AboveRange;
    res.efficiency = E(opt.alpha0);
    return res;
  }
  auto done = [&](double e) { return std::fabs(e - target) < lam; };

  // Phase 1: the paper's finite-difference Newton iteration with step halving.
  double alpha = opt.alpha0, Lambda = opt.step;
  double e = E(alpha);
  record(alpha, e);
  while (!done(e) && res.newtonSteps < opt.maxIterations) {
    const double slope = (E(alpha + Lambda) - e) / Lambda;
    if (!std::isfinite(slope) || slope == 0.0) break;  // flat (E saturated): bisect instead
    double next = alpha + (target - e) / slope;
    if (!std::isfinite(next)) break;
    next = std::min(std::max(next, opt.floor), opt.alphaMax);
    const double en = E(next);
    ++res.newtonSteps;
    if ((en - target) * (e - target) < 0.0) Lambda /= 2.0;
    alpha = next;
    e = en;
    record(alpha, e);
  }
  if (done(e)) {
    res.converged = true;
    res.outcome = AlphaSearchOutcome::Converged;
    return res;
  }

  // Phase 2: bisection on log α. E is non-increasing, so keep lo with E(lo) >= E_T >= E(hi).
  double lo = opt.floor, hi = opt.alpha0, elo = res.rangeHigh, ehi = E(hi);
  if (ehi > target) {
    lo = hi;
    elo = ehi;
    hi = std::min(opt.alphaMax, 2.0 * hi);
    ehi = E(hi);
    while (ehi > target && hi < opt.alphaMax) {
      lo = hi;
      elo = ehi;
      hi = std::min(opt.alphaMax, hi * 16.0);
      ehi = E(hi);
    }
  }
  if (done(elo)) {
    ++res.bisectionSteps;
    record(lo, elo);
  } else if (done(ehi)) {
    ++res.bisectionSteps;
    record(hi, ehi);
  } else if ((elo - target) * (ehi - target) <= 0.0) {
    while (res.bisectionSteps < opt.maxBisections) {
      const double mid = std::sqrt(lo * hi);
      const double em = E(mid);
      ++res.bisectionSteps;
      record(mid, em);
      if (done(em)) break;
      if (em > target) {
        lo = mid;
      } else {
        hi = mid;
      }
      if (!(hi > lo * (1.0 + 1e-15))) break;  // bracket exhausted in double precision
    }
  }
  if (!res.trace.empty() && done(res.trace.back().second)) {
    res.converged = true;
    res.outcome = AlphaSearchOutcome::Converged;
  } else {
    res.outcome = AlphaSearchOutcome::NotConverged;
  }
  return res;
}

}  // namespace fedsilo
