#include "core/rng.hpp"

#include <limits>

namespace fedsilo {

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Rng::Rng(std::uint64_t seed, std::int64_t client, std::int64_t round, Purpose purpose, std::uint64_t extra) {
  // Hash the key tuple; each component goes through the mixer so that nearby keys decorrelate.
  std::uint64_t h = mix64(seed ^ 0x5151f00dULL);
  h = mix64(h ^ static_cast<std::uint64_t>(client));
  h = mix64(h ^ static_cast<std::uint64_t>(round));
  h = mix64(h ^ static_cast<std::uint64_t>(purpose));
  h = mix64(h ^ extra);
  for (auto& s : s_) {
    h = mix64(h);
    s = h;
  }
  if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) s_[0] = 1;
}

static inline std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

std::uint64_t Rng::next() {
  ++draws_;
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

std::uint64_t Rng::below(std::uint64_t n) {
  if (n <= 1) return 0;
  // Lemire's nearly-divisionless method with rejection: unbiased.
  unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
  std::uint64_t l = static_cast<std::uint64_t>(m);
  if (l < n) {
    const std::uint64_t t = (0 - n) % n;
    while (l < t) {
      m = static_cast<unsigned __int128>(next()) * n;
      l = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

double Rng::normal() {
  if (haveSpare_) {
    haveSpare_ = false;
    return spare_;
  }
  double u, v, s;
  do {
    u = 2.0 * uniform() - 1.0;
    v = 2.0 * uniform() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double f = std::sqrt(-2.0 * std::log(s) / s);
  spare_ = v * f;
  haveSpare_ = true;
  return u * f;
}

double Rng::gamma(double shape) {
  if (shape < 1.0) {
    // Boost to shape + 1 and scale by U^(1/shape).
    const double g = gamma(shape + 1.0);
    double u = uniform();
    while (u == 0.0) u = uniform();
    return g * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = uniform();
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

std::vector<double> Rng::dirichlet(const std::vector<double>& alpha) {
  std::vector<double> g(alpha.size());
  double sum = 0.0;
  for (std::size_t i = 0; i < alpha.size(); ++i) {
    g[i] = gamma(alpha[i]);
    sum += g[i];
  }
  if (sum <= 0.0) {
    // All draws underflowed (tiny alpha): put the mass on one uniformly chosen component.
    std::fill(g.begin(), g.end(), 0.0);
    g[below(g.size())] = 1.0;
    return g;
  }
  for (auto& x : g) x /= sum;
  return g;
}

}  // namespace fedsilo
