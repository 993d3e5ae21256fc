// Fairness and summary statistics of per-client accuracies (used by every algorithm's summary), and
// the α-fairness machinery of α-FedAvg (Tian et al., 计算机研究与发展 2021, DOI 10.7544/issn1000-1239.20201081).
// Formulas: Jain et al. 1984 (index), the PLayer-FL paper's fairness (arXiv 2502.08829, appendix: the
// variance with 1/K); docs/algorithms.md, "Fairness metrics", gives each formula with its source.
// NaN entries (clients without a test split) are ignored.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace fedsilo {

struct AccuracySummary {
  double mean, median, worst10, best10, variance, jain;
  int count;  // finite values used
};

// Removes NaN entries.
std::vector<double> finiteValues(const std::vector<double>& x);
double mean(const std::vector<double>& x);
double median(std::vector<double> x);
double populationVariance(const std::vector<double>& x);  // 1/n
// Mean of the lowest (worst) / highest (best) ceil(n/10) values.
double worstFraction(std::vector<double> x, double fraction = 0.1);
double bestFraction(std::vector<double> x, double fraction = 0.1);
// Jain's index J(x) = (sum x)^2 / (n sum x^2), in [1/n, 1]; NaN when all x are 0.
double jainIndex(const std::vector<double>& x);
// Efficiency E = sum_k p_k a_k with weights normalised to sum to 1.
double efficiency(const std::vector<double>& accuracy, const std::vector<double>& weights);
AccuracySummary summarize(const std::vector<double>& accuracies);

// ---- α-fairness (α-FedAvg; the formulas are reconstructions, [I], docs/algorithms.md) -------------
//
// With accuracies a_k (clamped to [kAccuracyFloor, 1] so that a_k^(1/α-1) stays finite) and β = 1/α:
//   p_k(α) = a_k^(β-1) / Σ_j a_j^(β-1)                     (eq. 6, the KKT solution of max Σ U_α(a_k p_k))
//   p_k(α) ∝ w_k^β a_k^(β-1)                               (sample-weighted variant, Mo & Walrand's
//                                                          weighted α-fairness; an option, unconfirmed)
//   R_k = a_k p_k,  E(α) = Σ_k R_k,  J(α) = (Σ R_k)^2 / (K Σ R_k^2)   (eqs. 4, 5, 7)
// Unweighted, E(α) = Σ a^β / Σ a^(β-1) is a Lehmer mean of the accuracies: non-increasing in α on
// (0, ∞), from max_k a_k (α → 0) through the plain mean (α = 1) to the harmonic mean K / Σ 1/a_k
// (α → ∞); J(α) is non-decreasing (Theorems 1, 2; Guo et al. 2013). Both variants tend to the harmonic
// mean as α → ∞ (p_k → ∝ 1/a_k, R_k all equal). The weighted E(α) need not be monotone.
// NaN accuracies are skipped (weight 0); an empty sampleWeights means the unweighted form.

constexpr double kAccuracyFloor = 1e-6;

// Accuracy clamped to [kAccuracyFloor, 1] (NaN stays NaN).
double clampAccuracy(double a);
// The raw α-fair weight a^(1/α-1) (unnormalised; what an α-FedAvg client sends as its block weight).
double alphaFairWeight(double accuracy, double alpha);
// p_k(α), normalised to sum to 1 over the finite accuracies (log-sum-exp: stable for α down to 1e-10).
std::vector<double> alphaFairWeights(const std::vector<double>& accuracy, double alpha,
                                     const std::vector<double>& sampleWeights = {});
// R_k = a_k p_k (NaN accuracies give 0).
std::vector<double> utilities(const std::vector<double>& accuracy, const std::vector<double>& weights);
// E(α) = Σ_k a_k p_k(α) and J(α) = Jain(R(α)).
double alphaEfficiency(const std::vector<double>& accuracy, double alpha,
                       const std::vector<double>& sampleWeights = {});
double alphaFairness(const std::vector<double>& accuracy, double alpha, const std::vector<double>& sampleWeights = {});

// Algorithm 1 of the α-FedAvg paper (gradient-based approximation), lines as reconstructed in
// docs/algorithms.md ("Algorithm 1"): from α_0, repeat
//   E'(α_i) ≈ (E(α_i + Λ) - E(α_i)) / Λ,  α_{i+1} = max(τ, α_i + (E_T - E(α_i)) / E'(α_i)),
//   Λ ← Λ/2 when E(α_{i+1}) - E_T and E(α_i) - E_T differ in sign,
// until |E(α_i) - E_T| < λ. After maxIterations (or a zero/non-finite slope) it falls back to
// bisection on log α over [τ, alphaMax] (E is monotone in the unweighted form).
struct AlphaSearchOptions {
  double tolerance = 1e-5;  // λ
  double step = 1.0;        // Λ (initial finite-difference step)
  double floor = 1e-10;     // τ (replaces α <= 0)
  double alpha0 = 1.0;      // α_0
  int maxIterations = 100;  // Newton steps before the bisection fallback
  int maxBisections = 400;
  double alphaMax = 1e12;  // upper end of the bisection bracket
};

enum class AlphaSearchOutcome {
  Converged,     // |E(α) - E_T| < λ
  BelowRange,    // E_T <= E(∞) - λ: every α is more efficient than required (E(∞) = harmonic mean)
  AboveRange,    // E_T >= E(τ) + λ: no α reaches the target (E(τ) ≈ max_k a_k, unweighted)
  NotConverged,  // reachable by the range test but neither phase converged (non-monotone weighted E)
  NoData,        // no finite accuracy
};

struct AlphaSearchResult {
  double alpha = 1.0;
  bool converged = false;
  AlphaSearchOutcome outcome = AlphaSearchOutcome::NoData;
  double efficiency = 0.0;  // E(alpha)
  double target = 0.0;      // E_T
  double rangeLow = 0.0;    // E(∞) (the harmonic mean of the clamped accuracies)
  double rangeHigh = 0.0;   // E(τ)
  int newtonSteps = 0;
  int bisectionSteps = 0;
  std::vector<std::pair<double, double>> trace;  // every evaluated iterate (α_i, E(α_i)), in order
  std::string describe() const;                  // one line: outcome, α, E, target and the range
};

const char* outcomeName(AlphaSearchOutcome o);
// The reachable range of E over α in [τ, ∞): (E(∞), E(τ)). A target E_T is reachable (within λ) iff
// E(∞) - λ < E_T < E(τ) + λ; otherwise the result is BelowRange/AboveRange with alpha = 1 and
// converged = false.
AlphaSearchResult searchAlpha(const std::vector<double>& accuracy, double target,
                              const std::vector<double>& sampleWeights = {}, const AlphaSearchOptions& opt = {});

}  // namespace fedsilo
