// Rényi-DP accountant for the sampled Gaussian mechanism (SGM).
//
// One SGM step releases f(S) + N(0, sigma^2 I) where S is a Poisson sample of the data at rate q (each
// record, or each client for client-level DP, is in S independently with probability q) and f has L2
// sensitivity 1 under adding or removing one record. Its RDP at order alpha is log(A_alpha) / (alpha - 1)
// with A_alpha from Mironov, Talwar and Zhang 2019, "Rényi Differential Privacy of the Sampled Gaussian
// Mechanism" (arXiv:1908.10530), Section 3.3: a finite binomial sum at integer orders, a convergent
// two-part series with erfc weights at fractional ones. RDP composes by addition, so the accountant's
// state is one RDP value per order, and steps with different (q, sigma) simply add.
//
// (epsilon, delta) from RDP: the improved conversion of Balle, Barthe, Gaboardi, Hsu and Sato 2020,
// "Hypothesis testing interpretations and Rényi differential privacy" (AISTATS, arXiv:1905.09982,
// Theorem 21), the one TF Privacy's compute_eps and Opacus' get_privacy_spent use today:
//   epsilon = min over alpha of  rdp(alpha) + log((alpha - 1) / alpha) - (log delta + log alpha) / (alpha - 1).
// The classic conversion of Mironov 2017 ("Rényi Differential Privacy", arXiv:1702.07476, Prop. 3),
//   epsilon = min over alpha of  rdp(alpha) - log(delta) / (alpha - 1),
// is kept for comparison with figures published before the improved one was adopted.
#pragma once
#include <cstdint>
#include <vector>

namespace fedsilo {

// The orders TF Privacy and Opacus evaluate (1.1 .. 10.9 in steps of 0.1, then 12 .. 63), plus 128,
// 256 and 512 for regimes (tiny q, many steps) whose optimum lies beyond 63.
std::vector<double> defaultRdpOrders();

// RDP of one SGM step at `order` (> 1; +inf allowed). q in [0, 1], sigma >= 0 (the noise standard
// deviation over the L2 sensitivity, the "noise multiplier"). Returns +inf where the mechanism gives
// no RDP guarantee at that order (sigma = 0, infinite order). Throws ConfigError on bad arguments.
double sampledGaussianRdp(double q, double sigma, double order);

enum class RdpConversion { Improved, Classic };

struct PrivacySpent {
  double epsilon = 0.0;  // +inf when no order gives a finite bound
  double order = 0.0;    // the order that attains it (0 when epsilon is +inf)
};

// epsilon for `delta` in (0, 1) from RDP values at `orders` (same length, orders > 1, rdp >= 0).
PrivacySpent rdpToEpsilon(const std::vector<double>& orders, const std::vector<double>& rdp, double delta,
                          RdpConversion conversion = RdpConversion::Improved);

// Composition of SGM steps. Checkpoints store state() and restore it with restore().
class RdpAccountant {
 public:
  explicit RdpAccountant(std::vector<double> orders = defaultRdpOrders());

  // Adds `steps` SGM steps at sampling rate q and noise multiplier sigma.
  void compose(double q, double sigma, std::int64_t steps = 1);
  PrivacySpent spent(double delta, RdpConversion conversion = RdpConversion::Improved) const;

  const std::vector<double>& orders() const { return orders_; }
  const std::vector<double>& rdp() const { return rdp_; }
  // The orders followed by their RDP values (2 x orders().size() numbers).
  std::vector<double> state() const;
  // Restores state(); throws RuntimeError if it was written with a different order set.
  void restore(const std::vector<double>& state);

 private:
  std::vector<double> orders_;
  std::vector<double> rdp_;
  // The per-step RDP of the last (q, sigma) composed (a cache, not state).
  std::vector<double> cachedStep_;
  double cachedQ_ = 0.0, cachedSigma_ = 0.0;
};

// epsilon after `steps` SGM steps at (q, sigma) for `delta`, over the default orders.
PrivacySpent sgmEpsilon(double q, double sigma, std::int64_t steps, double delta,
                        RdpConversion conversion = RdpConversion::Improved);

}  // namespace fedsilo
