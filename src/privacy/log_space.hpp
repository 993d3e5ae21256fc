// Log-space arithmetic for the privacy accountant: sums of terms that over- or underflow as doubles
// (binomial weights times exp(k^2 / (2 sigma^2)) at orders up to 512), kept as logarithms.
#pragma once
#include <cmath>
#include <limits>
#include <utility>

namespace fedsilo {

constexpr double kLogZero = -std::numeric_limits<double>::infinity();

// log(exp(a) + exp(b)) without overflow; kLogZero is the logarithm of 0.
inline double logAddExp(double a, double b) {
  if (a < b) std::swap(a, b);
  if (b == kLogZero) return a;
  return a + std::log1p(std::exp(b - a));
}

// log(erfc(x)), accurate where erfc(x) underflows. erfc(x) is a normal double up to x ~ 26.5; beyond
// x = 25 the asymptotic series erfc(x) = exp(-x^2) / (x sqrt(pi)) * (1 - 1/(2x^2) + 3/(4x^4) - ...)
// has a relative error below 1e-12 after four correction terms (Abramowitz and Stegun 7.1.23).
inline double logErfc(double x) {
  if (x < 25.0) return std::log(std::erfc(x));
  const double r = 1.0 / (x * x);
  const double series = 1.0 - r / 2.0 + 3.0 * r * r / 4.0 - 15.0 * r * r * r / 8.0 + 105.0 * r * r * r * r / 16.0;
  constexpr double kLogSqrtPi = 0.5723649429247001;
  return -x * x - std::log(x) - kLogSqrtPi + std::log(series);
}

// A sum of signed terms held as (sign, log|value|): the fractional-order series of the sampled
// Gaussian mechanism has binomial coefficients of alternating sign past the order.
class SignedLogSum {
 public:
  void add(double logAbsTerm, int termSign) {
    if (logAbsTerm == kLogZero || termSign == 0) return;
    if (sign_ == 0) {
      sign_ = termSign;
      logAbs_ = logAbsTerm;
    } else if (sign_ == termSign) {
      logAbs_ = logAddExp(logAbs_, logAbsTerm);
    } else if (logAbs_ > logAbsTerm) {
      logAbs_ += std::log(-std::expm1(logAbsTerm - logAbs_));  // |a| - |b| = |a| (1 - |b|/|a|)
    } else if (logAbs_ < logAbsTerm) {
      logAbs_ = logAbsTerm + std::log(-std::expm1(logAbs_ - logAbsTerm));
      sign_ = termSign;
    } else {
      sign_ = 0;
      logAbs_ = kLogZero;
    }
  }
  int sign() const { return sign_; }
  double logAbs() const { return logAbs_; }

 private:
  int sign_ = 0;
  double logAbs_ = kLogZero;
};

}  // namespace fedsilo
