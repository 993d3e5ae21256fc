// DP-SGD inside a silo (Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar and Zhang 2016, "Deep Learning
// with Differential Privacy", CCS, arXiv:1607.00133, Algorithm 1), as the gradient strategy of the one
// training loop (LocalTrainer::train): each step takes a Poisson sample of the client's records at rate
// q = batch / n, clips every per-example gradient to C (Model::lossAndClippedGradient), adds
// N(0, z^2 C^2) to each coordinate of the sum and divides by the expected batch size q n:
//   g = ( sum_{i in B} g_i min(1, C / ||g_i||) + N(0, z^2 C^2 I) ) / (q n)
// The loop keeps its number of steps per epoch (ceil(n / batch)), its hook and its optimiser step; one
// epoch is then 1/q steps of the sampled Gaussian mechanism, each composed into the client's accountant.
#pragma once
#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#include "core/types.hpp"
#include "privacy/rdp_accountant.hpp"

namespace fedsilo {

// The DP-SGD settings of the client being trained, set on the trainer by the round driver
// (LocalTrainer::setPrivateSgd) for the duration of its update.
struct PrivateSgd {
  double clip = 1.0;              // C
  double noiseMultiplier = 0.0;   // z
  std::uint64_t seed = 0;         // the streams are keyed by (seed, client, round, step)
  int client = 0;
  int round = 0;
  RdpAccountant* accountant = nullptr;  // the client's: one SGM step (q, z) per private step
  std::int64_t steps = 0;               // private steps run so far in this update (the streams' step key)
};

// The Poisson sample of `indices` at rate q for one step, in index order: each record independently
// with probability q (geometric gaps, so O(q n) draws), from Rng(seed, client, round, DpBatch, step).
void poissonBatch(const IndexList& indices, double q, const PrivateSgd& p, IndexList& out);

// The stream of step `p.steps`'s noise: Rng(seed, client, round, DpSgdNoise, step).
Rng privateSgdNoiseRng(const PrivateSgd& p);

}  // namespace fedsilo
