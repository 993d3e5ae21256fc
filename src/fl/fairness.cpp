#include "fl/fairness.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/error.hpp"
#include "core/types.hpp"

namespace fedsilo {

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
    case AlphaSearchOutcome::Converged:
      return "converged";
    case AlphaSearchOutcome::BelowRange:
      return "unreachable (target below E(inf), the harmonic mean)";
    case AlphaSearchOutcome::AboveRange:
      return "unreachable (target above E(tau), about the best accuracy)";
    case AlphaSearchOutcome::NotConverged:
      return "not converged";
    case AlphaSearchOutcome::NoData:
      return "no accuracies";
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

namespace {

// One run of searchAlpha: E(α) over the finite accuracies, the target, and the result being filled.
struct AlphaSearch {
  std::vector<double> accuracy;  // the finite accuracies
  std::vector<double> weights;   // their sample weights (empty: unweighted)
  double target;
  const AlphaSearchOptions& opt;
  AlphaSearchResult& res;

  double efficiency(double alpha) const { return alphaEfficiency(accuracy, alpha, weights); }
  bool meetsTarget(double e) const { return std::fabs(e - target) < opt.tolerance; }
  // Appends the iterate to the trace and makes it the result.
  void record(double alpha, double e) {
    res.trace.emplace_back(alpha, e);
    res.alpha = alpha;
    res.efficiency = e;
  }
};

// The reachable range (E(∞), E(τ)). E(∞): p_k -> 1/a_k / Σ 1/a_j in both variants, so E(∞) = K / Σ_k 1/a_k.
void setReachableRange(AlphaSearch& s) {
  double inv = 0.0;
  for (double v : s.accuracy) inv += 1.0 / clampAccuracy(v);
  s.res.rangeLow = static_cast<double>(s.accuracy.size()) / inv;
  s.res.rangeHigh = s.efficiency(s.opt.floor);
}

// Whether no α reaches the target within λ: sets BelowRange or AboveRange (with E(α_0)).
bool targetUnreachable(AlphaSearch& s) {
  const double lam = s.opt.tolerance;
  if (s.target <= s.res.rangeLow - lam)
    s.res.outcome = AlphaSearchOutcome::BelowRange;
  else if (s.target >= s.res.rangeHigh + lam)
    s.res.outcome = AlphaSearchOutcome::AboveRange;
  else
    return false;
  s.res.efficiency = s.efficiency(s.opt.alpha0);
  return true;
}

// Phase 1: the paper's finite-difference Newton iteration with step halving. Returns the last E.
double newtonPhase(AlphaSearch& s) {
  double alpha = s.opt.alpha0, Lambda = s.opt.step;
  double e = s.efficiency(alpha);
  s.record(alpha, e);
  while (!s.meetsTarget(e) && s.res.newtonSteps < s.opt.maxIterations) {
    const double slope = (s.efficiency(alpha + Lambda) - e) / Lambda;
    if (!std::isfinite(slope) || slope == 0.0) break;  // flat (E saturated): bisect instead
    double next = alpha + (s.target - e) / slope;
    if (!std::isfinite(next)) break;
    next = std::min(std::max(next, s.opt.floor), s.opt.alphaMax);
    const double en = s.efficiency(next);
    ++s.res.newtonSteps;
    if ((en - s.target) * (e - s.target) < 0.0) Lambda /= 2.0;
    alpha = next;
    e = en;
    s.record(alpha, e);
  }
  return e;
}

// A bracket [lo, hi] of α with E(lo) >= E_T >= E(hi) when one exists below alphaMax (E is
// non-increasing): from [τ, α_0], or moved up from α_0 by factors of 2, then 16.
struct AlphaBracket {
  double lo, elo, hi, ehi;
};

AlphaBracket bracketTarget(const AlphaSearch& s) {
  AlphaBracket b{s.opt.floor, s.res.rangeHigh, s.opt.alpha0, s.efficiency(s.opt.alpha0)};
  if (b.ehi > s.target) {
    b.lo = b.hi;
    b.elo = b.ehi;
    b.hi = std::min(s.opt.alphaMax, 2.0 * b.hi);
    b.ehi = s.efficiency(b.hi);
    while (b.ehi > s.target && b.hi < s.opt.alphaMax) {
      b.lo = b.hi;
      b.elo = b.ehi;
      b.hi = std::min(s.opt.alphaMax, b.hi * 16.0);
      b.ehi = s.efficiency(b.hi);
    }
  }
  return b;
}

// Phase 2: bisection on log α inside the bracket, until E meets the target or the bracket is exhausted.
void bisectionPhase(AlphaSearch& s) {
  AlphaBracket b = bracketTarget(s);
  if (s.meetsTarget(b.elo)) {
    ++s.res.bisectionSteps;
    s.record(b.lo, b.elo);
  } else if (s.meetsTarget(b.ehi)) {
    ++s.res.bisectionSteps;
    s.record(b.hi, b.ehi);
  } else if ((b.elo - s.target) * (b.ehi - s.target) <= 0.0) {
    while (s.res.bisectionSteps < s.opt.maxBisections) {
      const double mid = std::sqrt(b.lo * b.hi);
      const double em = s.efficiency(mid);
      ++s.res.bisectionSteps;
      s.record(mid, em);
      if (s.meetsTarget(em)) break;
      if (em > s.target) {
        b.lo = mid;
      } else {
        b.hi = mid;
      }
      if (!(b.hi > b.lo * (1.0 + 1e-15))) break;  // bracket exhausted in double precision
    }
  }
}

}  // namespace

AlphaSearchResult searchAlpha(const std::vector<double>& accuracy, double target, const std::vector<double>& w,
                              const AlphaSearchOptions& opt) {
  FEDSILO_ASSERT(opt.tolerance > 0.0 && opt.step > 0.0 && opt.floor > 0.0 && opt.alpha0 >= opt.floor &&
                 opt.alphaMax > opt.alpha0);
  AlphaSearchResult res;
  res.target = target;
  res.alpha = opt.alpha0;
  AlphaSearch s{finiteValues(accuracy), {}, target, opt, res};
  if (s.accuracy.empty() || !std::isfinite(target)) return res;  // NoData
  if (!w.empty()) {
    FEDSILO_ASSERT(w.size() == accuracy.size());
    for (std::size_t k = 0; k < accuracy.size(); ++k)
      if (std::isfinite(accuracy[k])) s.weights.push_back(w[k]);
  }
  setReachableRange(s);
  if (targetUnreachable(s)) return res;
  if (s.meetsTarget(newtonPhase(s))) {
    res.converged = true;
    res.outcome = AlphaSearchOutcome::Converged;
    return res;
  }
  bisectionPhase(s);
  if (!res.trace.empty() && s.meetsTarget(res.trace.back().second)) {
    res.converged = true;
    res.outcome = AlphaSearchOutcome::Converged;
  } else {
    res.outcome = AlphaSearchOutcome::NotConverged;
  }
  return res;
}

}  // namespace fedsilo
