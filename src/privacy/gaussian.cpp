#include "privacy/gaussian.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.hpp"

namespace fedsilo {

namespace {

constexpr int kLayers = 256;
const double kSqrtHalfPi = std::sqrt(std::acos(-1.0) / 2.0);

double density(double x) { return std::exp(-0.5 * x * x); }  // unnormalised, on x >= 0

// Layer i (0..255) covers [0, x[i]] x [f(x[i]), f(x[i+1])], with x[1] = r > x[2] > ... > x[256] = 0;
// layer 0 is the base: [0, r] x [0, f(r)] plus the tail beyond r, drawn as a rectangle of the same area V
// and width x[0] = V / f(r).
struct Tables {
  std::array<double, kLayers + 1> x{};
  std::array<double, kLayers + 1> f{};
  double r = 0.0, area = 0.0;
};

// Fills the edges for outer edge r; returns f(x[255]) + V / x[255] - 1, the top layer's overshoot of
// the peak f(0) = 1 (positive: layers too thick, r too small).
double buildLayers(double r, Tables& t) {
  t.r = r;
  t.area = r * density(r) + kSqrtHalfPi * std::erfc(r / std::sqrt(2.0));
  t.x[0] = t.area / density(r);
  t.x[1] = r;
  for (int i = 1; i < kLayers - 1; ++i) {
    const double top = density(t.x[i]) + t.area / t.x[i];
    if (top >= 1.0) return 1.0;  // reached the peak before the last layer
    t.x[i + 1] = std::sqrt(-2.0 * std::log(top));
  }
  return density(t.x[kLayers - 1]) + t.area / t.x[kLayers - 1] - 1.0;
}

Tables makeTables() {
  Tables t;
  double lo = 2.0, hi = 5.0;  // overshoot > 0 at lo, < 0 at hi
  for (int it = 0; it < 200 && hi - lo > 1e-15; ++it) {
    const double mid = 0.5 * (lo + hi);
    (buildLayers(mid, t) > 0.0 ? lo : hi) = mid;
  }
  buildLayers(hi, t);
  t.x[kLayers] = 0.0;
  for (int i = 0; i <= kLayers; ++i) t.f[i] = density(t.x[i]);
  t.f[0] = 0.0;  // the base layer's bottom
  return t;
}

const Tables& tables() {
  static const Tables t = makeTables();
  return t;
}

// The random source of the sampler: Rng itself, or the inlined generator of addScaledNormals.
struct RngBits {
  Rng& rng;
  std::uint64_t next() { return rng.next(); }
  double uniform() { return rng.uniform(); }
};

// xoshiro256** (Blackman and Vigna), the algorithm of Rng::next, seeded from four draws of a keyed Rng.
class InlineBits {
 public:
  explicit InlineBits(Rng& key) {
    for (auto& w : s_) w = key.next();
    if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) s_[0] = 1;
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

// Exp(1) with an exact tail: -ln(1 - U), where 1 - U takes the values k 2^-53 (k = 1 .. 2^53); the
// smallest stands for (0, 2^-53], where Exp(1) is 53 ln 2 plus a fresh Exp(1) (memorylessness), so no
// value is out of reach (docs/privacy.md, "Tails of the samplers").
template <typename Bits>
double exponential(Bits& bits) {
  constexpr double kTop = 1.0 - 0x1.0p-53;  // the largest uniform
  double excess = 0.0;
  for (;;) {
    const double u = bits.uniform();
    if (u < kTop) return excess - std::log1p(-u);
    excess += 53.0 * 0.69314718055994530942;
  }
}

// Beyond r: x = r + e1 / r with e1 ~ Exp(1), accepted when 2 e2 > (e1 / r)^2 (Marsaglia 1964).
template <typename Bits>
double tail(double r, Bits& bits) {
  for (;;) {
    const double a = exponential(bits) / r;
    const double b = exponential(bits);
    if (2.0 * b > a * a) return r + a;
  }
}

// One attempt of the ziggurat from its first 64-bit draw: the layer (low 8 bits), the sign (bit 8) and
// the abscissa (top 53 bits); the wedge and tail steps take further draws from `src`. Returns false
// when the point is rejected (a new attempt must start from a fresh draw).
template <typename Bits>
inline bool attempt(const Tables& t, std::uint64_t bits, Bits& src, double& out) {
  const int layer = static_cast<int>(bits & 0xff);
  const bool negative = (bits >> 8) & 1;
  const double u = static_cast<double>(bits >> 11) * 0x1.0p-53;  // [0, 1), independent of the low bits
  const double x = u * t.x[layer];
  double v;
  if (x < t.x[layer + 1]) {
    v = x;  // inside the part of the layer under the curve
  } else if (layer == 0) {
    v = tail(t.r, src);
  } else {
    // A wedge: accept (x, y) under the curve, y uniform over the layer's height.
    const double y = t.f[layer] + src.uniform() * (t.f[layer + 1] - t.f[layer]);
    if (!(y < density(x))) return false;
    v = x;
  }
  out = negative ? -v : v;
  return true;
}

template <typename Bits>
inline double ziggurat(const Tables& t, Bits& src) {
  double out;
  while (!attempt(t, src.next(), src, out)) {
  }
  return out;
}

// Counter-mode first draws: draw i is the SplitMix64 output function of key + i * gamma (Steele, Lea and
// Flood 2014), so a block of first draws and their fast-path test vectorise (the table reads become
// gathers); the ~1% of points outside the fast path finish their attempt, and any further attempts,
// on a xoshiro256** generator seeded from the same key.
constexpr std::uint64_t kGamma = 0x9e3779b97f4a7c15ULL;

inline std::uint64_t counterDraw(std::uint64_t key, std::uint64_t i) {
  std::uint64_t z = key + i * kGamma;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The draws the counter-mode fast path rejects (about 1%) finish their attempt, and any further attempts, on
// the xoshiro256** generator, in index order: x[j] = (x[j] + stddev * z) * scale for the block's rejected j.
template <typename T, typename Bits>
void finishRejected(const Tables& t, std::uint64_t counterKey, std::size_t b0, const std::uint8_t* rejected,
                    std::size_t m, T* xb, double stddev, T scale, Bits& slow) {
  for (std::size_t j0 = 0; j0 < m; j0 += 8) {
    std::uint64_t word = 0;  // eight flags a word: one test for eight points
    std::memcpy(&word, rejected + j0, 8);
    if (m - j0 < 8) word &= (std::uint64_t(1) << (8 * (m - j0))) - 1;
    for (; word != 0; word &= word - 1) {
      const std::size_t j = j0 + static_cast<std::size_t>(__builtin_ctzll(word)) / 8;
      double v;
      if (!attempt(t, counterDraw(counterKey, b0 + j), slow, v)) v = ziggurat(t, slow);
      xb[j] = static_cast<T>(xb[j] + stddev * v) * scale;
    }
  }
}

template <typename T>
void addScaled(T* x, std::size_t n, double stddev, T scale, Rng& key) {
  const Tables& t = tables();
  const std::uint64_t counterKey = key.next();
  InlineBits slow(key);
  constexpr std::size_t kBlock = 256;
  std::uint8_t rejected[kBlock];
  const double* edge = t.x.data();
  for (std::size_t b0 = 0; b0 < n; b0 += kBlock) {
    const std::size_t m = std::min(kBlock, n - b0);
    T* xb = x + b0;
    // The fast path of attempt(), written without branches so that it vectorises: a rejected point adds
    // -0.0 and multiplies by 1, which leaves x[j] as it was (also x[j] = -0.0) for finishRejected.
    for (std::size_t j = 0; j < m; ++j) {
      const std::uint64_t bits = counterDraw(counterKey, b0 + j);
      const std::uint64_t layer = bits & 0xff;
      const double v = static_cast<double>(static_cast<std::int64_t>(bits >> 11)) * 0x1.0p-53 * edge[layer];
      const bool accepted = v < edge[layer + 1];
      const double z = (bits & 0x100) ? -v : v;
      rejected[j] = !accepted;
      const double add = accepted ? z : -0.0;
      const T factor = accepted ? scale : T(1);
      xb[j] = static_cast<T>(xb[j] + stddev * add) * factor;
    }
    finishRejected(t, counterKey, b0, rejected, m, xb, stddev, scale, slow);
  }
}

}  // namespace

double zigguratNormal(Rng& rng) {
  RngBits bits{rng};
  return ziggurat(tables(), bits);
}

void addScaledNormals(float* x, std::size_t n, double stddev, Rng& key, float scale) {
  addScaled(x, n, stddev, scale, key);
}
void addScaledNormals(double* x, std::size_t n, double stddev, Rng& key, double scale) {
  addScaled(x, n, stddev, scale, key);
}

ZigguratShape zigguratShape() { return {tables().r, tables().area}; }

}  // namespace fedsilo
