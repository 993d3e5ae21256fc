// Fast standard normal draws for DP noise: one Gaussian per model parameter per release (per round for
// DP-FedAvg, per step for DP-SGD), where Rng::normal (polar method: a log and a square root per pair,
// plus rejections) costs more than a training step of the MLP.
//
// Ziggurat method (Marsaglia and Tsang 2000, "The Ziggurat Method for Generating Random Variables",
// Journal of Statistical Software 5(8)) with 256 layers of equal area under exp(-x^2/2): about 99% of
// draws take one 64-bit random number, a table look-up, a multiplication and a comparison; the rest go
// through an exact rejection step (wedges) or Marsaglia's exact tail sampler beyond r. The result is an
// exact N(0, 1) sampler (up to double rounding), not an approximation.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/rng.hpp"

namespace fedsilo {

// One N(0, 1) draw from `rng`.
double zigguratNormal(Rng& rng);

// x[i] = (x[i] + stddev * N(0, 1)) * scale for i < n, the sum rounded to T before the product (so scale = 1
// is x[i] += stddev * N(0, 1), and any scale gives what a second pass x[i] *= scale would): the same
// ziggurat, its first draws in counter mode (SplitMix64 on a key drawn from `key`, so keyed like `key`)
// so that the common case vectorises, the rest from a xoshiro256** generator seeded from `key`'s next
// draws. Draw i depends on i and the key only (and the rejected points before it), so the first m
// values of any call are those of a call with n = m. DP-SGD passes scale = 1 / the expected batch
// size, saving a pass over the gradient.
void addScaledNormals(float* x, std::size_t n, double stddev, Rng& key, float scale = 1.0f);
void addScaledNormals(double* x, std::size_t n, double stddev, Rng& key, double scale = 1.0);

// The table's outer edge r and the common layer area V (exposed for the tests).
struct ZigguratShape {
  double r;
  double area;
};
ZigguratShape zigguratShape();

}  // namespace fedsilo
