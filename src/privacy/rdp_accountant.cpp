#include "privacy/rdp_accountant.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "privacy/log_space.hpp"

namespace fedsilo {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// log A_alpha at an integer order (Mironov et al. 2019, Section 3.3, the binomial expansion):
//   A_alpha = sum_{k=0..alpha} C(alpha, k) (1 - q)^(alpha - k) q^k exp((k^2 - k) / (2 sigma^2)).
double logAIntegerOrder(double q, double sigma, long long alpha) {
  const double logQ = std::log(q), log1mQ = std::log1p(-q), twoVar = 2.0 * sigma * sigma;
  const double logAlphaFactorial = std::lgamma(static_cast<double>(alpha) + 1.0);
  double logA = kLogZero;
  for (long long k = 0; k <= alpha; ++k) {
    const double kd = static_cast<double>(k);
    const double logBinom =
        logAlphaFactorial - std::lgamma(kd + 1.0) - std::lgamma(static_cast<double>(alpha - k) + 1.0);
    const double term = logBinom + kd * logQ + static_cast<double>(alpha - k) * log1mQ + (kd * kd - kd) / twoVar;
    logA = logAddExp(logA, term);
  }
  return logA;
}

// log A_alpha at a fractional order (Mironov et al. 2019, Section 3.3): A_alpha = A0 + A1, split at
// z0 = sigma^2 log(1/q - 1) + 1/2, where the likelihood ratio of the two mixture components crosses 1;
//   A0 = sum_k C(alpha, k) q^k (1-q)^(alpha-k) exp((k^2 - k)/(2 sigma^2)) erfc((k - z0)/(sqrt2 sigma)) / 2
//   A1 = sum_k C(alpha, k) q^(alpha-k) (1-q)^k exp((j^2 - j)/(2 sigma^2)) erfc((z0 - j)/(sqrt2 sigma)) / 2,
// j = alpha - k. C(alpha, k) is the generalised binomial coefficient, negative for some k > alpha; the
// series converges (past the order the signs alternate, so the error of stopping is below the first
// term left out) and is summed until past the order its terms fall below e^-30 (1e-13) of the sum.
double logAFractionalOrder(double q, double sigma, double alpha) {
  const double logQ = std::log(q), log1mQ = std::log1p(-q), twoVar = 2.0 * sigma * sigma;
  const double z0 = sigma * sigma * std::log(1.0 / q - 1.0) + 0.5;
  const double sqrt2Sigma = std::sqrt(2.0) * sigma, logHalf = std::log(0.5);
  SignedLogSum a0, a1;
  double logAbsBinom = 0.0;  // log |C(alpha, 0)|
  int binomSign = 1;
  constexpr int kMaxTerms = 100000;
  bool converged = false;
  double lastTerm = kLogZero;
  for (int k = 0; k < kMaxTerms && !converged; ++k) {
    const double kd = k, j = alpha - kd;
    const double s0 =
        logAbsBinom + kd * logQ + j * log1mQ + (kd * kd - kd) / twoVar + logHalf + logErfc((kd - z0) / sqrt2Sigma);
    const double s1 =
        logAbsBinom + j * logQ + kd * log1mQ + (j * j - j) / twoVar + logHalf + logErfc((z0 - j) / sqrt2Sigma);
    a0.add(s0, binomSign);
    a1.add(s1, binomSign);
    const double logSum = logAddExp(a0.logAbs(), a1.logAbs());
    lastTerm = std::max(s0, s1);
    converged = kd > alpha && lastTerm < logSum - 30.0;
    // C(alpha, k + 1) = C(alpha, k) (alpha - k) / (k + 1)
    const double ratio = (alpha - kd) / (kd + 1.0);
    logAbsBinom += std::log(std::fabs(ratio));
    if (ratio < 0) binomSign = -binomSign;
  }
  if (!converged)
    throw RuntimeError(fmt("RDP of the sampled Gaussian mechanism at order ", alpha, " (q = ", q, ", sigma = ", sigma,
                           "): the series did not converge in ", kMaxTerms, " terms"));
  FEDSILO_ASSERT(a0.sign() >= 0 && a1.sign() >= 0, "SGM series for alpha = ", alpha, " gave a negative part");
  // The terms left out sum to less than the last one added (alternating, decreasing): adding it once
  // more makes the result an upper bound, so truncation never understates the RDP.
  return logAddExp(logAddExp(a0.logAbs(), a1.logAbs()), lastTerm);
}

void checkDelta(double delta) {
  if (!(delta > 0.0 && delta < 1.0)) throw ConfigError(fmt("delta = ", delta, ": expected a number in (0, 1)"));
}

double epsilonAtOrder(double alpha, double rdp, double logDelta, RdpConversion conversion) {
  if (std::isinf(rdp) || std::isinf(alpha)) return kInf;
  if (conversion == RdpConversion::Classic) return rdp - logDelta / (alpha - 1.0);
  return rdp + std::log1p(-1.0 / alpha) - (logDelta + std::log(alpha)) / (alpha - 1.0);
}

}  // namespace

std::vector<double> defaultRdpOrders() {
  std::vector<double> orders;
  for (int x = 1; x < 100; ++x) orders.push_back(1.0 + x / 10.0);
  for (int a = 12; a < 64; ++a) orders.push_back(a);
  for (double a : {128.0, 256.0, 512.0}) orders.push_back(a);
  return orders;
}

double sampledGaussianRdp(double q, double sigma, double order) {
  if (!(q >= 0.0 && q <= 1.0)) throw ConfigError(fmt("sampling rate q = ", q, ": expected a number in [0, 1]"));
  if (!(sigma >= 0.0) || std::isinf(sigma))
    throw ConfigError(fmt("noise multiplier = ", sigma, ": expected a finite number >= 0"));
  if (!(order > 1.0)) throw ConfigError(fmt("RDP order = ", order, ": expected a number > 1"));
  if (q == 0.0) return 0.0;
  if (sigma == 0.0 || std::isinf(order)) return kInf;
  if (q == 1.0) return order / (2.0 * sigma * sigma);  // the Gaussian mechanism itself
  const double logA = order == std::floor(order) && order <= 1e6
                          ? logAIntegerOrder(q, sigma, static_cast<long long>(order))
                          : logAFractionalOrder(q, sigma, order);
  return std::max(0.0, logA / (order - 1.0));
}

PrivacySpent rdpToEpsilon(const std::vector<double>& orders, const std::vector<double>& rdp, double delta,
                          RdpConversion conversion) {
  checkDelta(delta);
  FEDSILO_ASSERT(orders.size() == rdp.size() && !orders.empty(), "orders and RDP values differ in length");
  const double logDelta = std::log(delta);
  PrivacySpent best{kInf, 0.0};
  for (std::size_t i = 0; i < orders.size(); ++i) {
    FEDSILO_ASSERT(orders[i] > 1.0 && rdp[i] >= 0.0, "order ", orders[i], " rdp ", rdp[i]);
    // delta >= sqrt(1 - exp(-rdp)) bounds the total variation distance (Bretagnolle-Huber, with
    // KL <= D_alpha), so (0, delta)-DP holds; the improved conversion can use it, as TF Privacy does.
    if (conversion == RdpConversion::Improved && delta * delta + std::expm1(-rdp[i]) >= 0.0) return {0.0, orders[i]};
    const double eps = epsilonAtOrder(orders[i], rdp[i], logDelta, conversion);
    if (eps < best.epsilon) best = {eps, orders[i]};
  }
  if (best.epsilon < 0.0) best.epsilon = 0.0;
  return best;
}

RdpAccountant::RdpAccountant(std::vector<double> orders) : orders_(std::move(orders)), rdp_(orders_.size(), 0.0) {
  FEDSILO_ASSERT(!orders_.empty(), "an RDP accountant needs at least one order");
  for (double a : orders_) FEDSILO_ASSERT(a > 1.0, "RDP order ", a, " is not > 1");
}

void RdpAccountant::compose(double q, double sigma, std::int64_t steps) {
  if (steps < 0) throw ConfigError(fmt("steps = ", steps, ": expected an integer >= 0"));
  if (steps == 0) return;
  // A run composes the same (q, sigma) every round: compute the per-step RDP once.
  if (cachedStep_.empty() || q != cachedQ_ || sigma != cachedSigma_) {
    std::vector<double> step(orders_.size());
    for (std::size_t i = 0; i < orders_.size(); ++i) step[i] = sampledGaussianRdp(q, sigma, orders_[i]);
    cachedStep_ = std::move(step);
    cachedQ_ = q;
    cachedSigma_ = sigma;
  }
  for (std::size_t i = 0; i < orders_.size(); ++i) rdp_[i] += static_cast<double>(steps) * cachedStep_[i];
}

PrivacySpent RdpAccountant::spent(double delta, RdpConversion conversion) const {
  return rdpToEpsilon(orders_, rdp_, delta, conversion);
}

std::vector<double> RdpAccountant::state() const {
  std::vector<double> s(orders_);
  s.insert(s.end(), rdp_.begin(), rdp_.end());
  return s;
}

void RdpAccountant::restore(const std::vector<double>& state) {
  const std::size_t n = orders_.size();
  if (state.size() != 2 * n || !std::equal(orders_.begin(), orders_.end(), state.begin()))
    throw RuntimeError(fmt("privacy accountant state: ", state.size(), " values that do not start with this build's ",
                           n, " RDP orders (a checkpoint from a build with another order set?)"));
  for (std::size_t i = 0; i < n; ++i)
    if (!(state[n + i] >= 0.0))
      throw RuntimeError(
          fmt("privacy accountant state: RDP value ", state[n + i], " at order ", orders_[i], " is not >= 0"));
  rdp_.assign(state.begin() + static_cast<std::ptrdiff_t>(n), state.end());
}

PrivacySpent sgmEpsilon(double q, double sigma, std::int64_t steps, double delta, RdpConversion conversion) {
  RdpAccountant acc;
  acc.compose(q, sigma, steps);
  return acc.spent(delta, conversion);
}

}  // namespace fedsilo
