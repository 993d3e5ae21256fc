// Fairness and summary statistics of per-client accuracies (used by every algorithm's summary).
// Formulas: Jain et al. 1984 (index), ALGORITHMS.md section 1.5 (variance with 1/K) and section 2.
// NaN entries (clients without a test split) are ignored.
#pragma once
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

}  // namespace fedsilo
