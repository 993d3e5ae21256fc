// Building blocks of client-level DP-FedAvg (McMahan, Ramage, Talwar and Zhang 2018, "Learning
// Differentially Private Recurrent Language Models", arXiv:1710.06963): Poisson client sampling, L2
// clipping of each client's update, Gaussian noise on the sum (at the server, or split across the
// clients), and adaptive clipping to a norm quantile (Andrew, Thakkar, McMahan and Ramaswamy 2021,
// "Differentially Private Learning with Adaptive Clipping", arXiv:1905.03871).
//
// Every random draw comes from a counter-based stream keyed by (seed, client, round, purpose), never
// by rank, so a run draws the same sample, noise and clip norms at any number of ranks.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/rng.hpp"

namespace fedsilo {

// ---- Poisson sampling -------------------------------------------------------------------------------
// Client k takes part in round r with probability q, independently of every other client and round:
// the sampling the accountant assumes (a fixed-size sample would need a different RDP analysis).
bool poissonSelected(std::uint64_t seed, std::int64_t client, std::int64_t round, double q);
// The clients 0..numClients-1 selected in `round`, in increasing order (possibly none).
std::vector<int> poissonSample(std::uint64_t seed, std::int64_t round, int numClients, double q);

// ---- Clipping -----------------------------------------------------------------------------------------
// L2 norm of x[0..n), accumulated in double.
double l2Norm(const float* x, std::size_t n);
// Scales x[0..n) in place to L2 norm at most `clip` (> 0): x *= min(1, clip / ||x||). Returns the
// norm before clipping (adaptive clipping needs it).
double clipL2(float* x, std::size_t n, double clip);

// ---- Gaussian noise -----------------------------------------------------------------------------------
// The stream of the noise the server adds to the round's aggregate (central DP): key (seed, round).
Rng centralNoiseRng(std::uint64_t seed, std::int64_t round);
// The stream of client k's share of the noise (distributed DP): key (seed, k, round).
Rng clientNoiseRng(std::uint64_t seed, std::int64_t client, std::int64_t round);
// Per-client standard deviation such that the sum of `clients` independent shares has standard
// deviation noiseMultiplier * clip: noiseMultiplier * clip / sqrt(clients).
double distributedNoiseStd(double noiseMultiplier, double clip, int clients);
// Standard deviation of the noise the server adds to a sum that holds `shares` of the `clients`
// distributed shares (clients that dropped, or a sum secure aggregation discarded, leave theirs out),
// so that the sum's noise has standard deviation noiseMultiplier * clip whatever reached it:
// noiseMultiplier * clip * sqrt(1 - shares / clients), and the whole noise when clients == 0.
double distributedTopUpStd(double noiseMultiplier, double clip, int shares, int clients);
// x[i] += stddev * N(0, 1) in index order (addScaledNormals: a ziggurat on a generator seeded from `rng`).
void addGaussianNoise(float* x, std::size_t n, double stddev, Rng& rng);
void addGaussianNoise(double* x, std::size_t n, double stddev, Rng& rng);

// ---- Adaptive clipping (Andrew et al. 2021, Algorithm 1 with geometric update) -----------------------
// The clip norm C tracks the `targetQuantile` gamma of the clients' update norms. Each sampled client i
// reports the centred bit b_i - 1/2 (b_i = 1[||d_i|| <= C]), whose sum has sensitivity 1/2; the server
// adds N(0, countStd^2) to the sum and estimates the fraction at or below C over the expected number m
// of clients per round,
//   b = (sum_i (b_i - 1/2) + N(0, countStd^2)) / m + 1/2,
// then sets C <- C * exp(-learningRate * (b - gamma)). The count is a second Gaussian release; the
// update's noise multiplier must be raised so that both together cost what the planned multiplier does
// (see updateNoiseMultiplier).
struct AdaptiveClipOptions {
  double initialClip = 0.1;     // paper: 0.1
  double targetQuantile = 0.5;  // gamma; paper: 0.5 for most tasks
  double learningRate = 0.2;    // eta_C; paper: 0.2
  double countStd = 0.0;        // sigma_b; paper: expected clients per round / 20
};

class AdaptiveClip {
 public:
  explicit AdaptiveClip(const AdaptiveClipOptions& options);
  double clip() const { return clip_; }
  // One round: `clientsAtOrBelow` of the `sampledClients` had an update norm <= clip(); m =
  // `expectedClients` (> 0); the noise on the count is drawn from the key (seed, round). Returns b.
  double update(int clientsAtOrBelow, int sampledClients, double expectedClients, std::uint64_t seed,
                std::int64_t round);
  // For checkpoints: the clip norm is the whole state.
  void restore(double clip);

 private:
  AdaptiveClipOptions opt_;
  double clip_;
};

// Noise multiplier for the update sum when the clipped-count release with standard deviation countStd
// is composed with it, so that the pair costs the same RDP as one Gaussian release with multiplier
// `target` (Andrew et al. 2021, Theorem 1: the centred count has sensitivity 1/2, hence multiplier
// 2 countStd, and Gaussian mechanisms compose as 1/z^2 = 1/z_update^2 + 1/(2 countStd)^2).
// Throws ConfigError when countStd is too small (the count alone already costs more than `target`).
double updateNoiseMultiplier(double target, double countStd);

}  // namespace fedsilo
