// Counter-based random streams keyed by (seed, client, round, purpose), never by rank: the same
// configuration draws the same numbers at any number of MPI ranks.
#pragma once
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace fedsilo {

// What a stream is used for. Values are part of the reproducibility contract: never renumber.
enum class Purpose : std::uint64_t {
  Init = 1,         // model initialisation (client = -1: the shared initial model)
  Partition = 2,    // partitioners
  Split = 3,        // train/val/test split of a client's slice
  Shuffle = 4,      // per-epoch permutation in local training
  Select = 5,       // client sampling per round
  Dropout = 6,      // dropout masks
  Sensitivity = 7,  // the batch the layer sensitivity is measured on
  SplitLayer = 8,   // PLayer-FL-Random split draw
  LayerKeep = 9,    // FedLP per-layer Bernoulli
  Gems = 10,        // GEMS surface samples
  KMeans = 11,      // k-means initialisation
  Public = 12,      // public-sample draw
  Generate = 13,    // synthetic data generation
  Verify = 14,      // alpha-FedAvg verification sample
  ClientDropout = 15,  // fl.dropout
  Tie = 16,         // ensemble random tie-break
  Augment = 17,     // training-image augmentation, per (client, round, sample position)
  // Privacy (src/privacy), numbered from 40 so that other additions above cannot collide.
  DpSample = 40,       // Poisson client sampling, per (client, round)
  DpNoise = 41,        // Gaussian noise: the server's (client = -1) or a client's share, per round
  DpClipCount = 42,    // noise on the adaptive-clipping count, per round
  SecAggMask = 43,     // secure aggregation pairwise masks (client = lower id, extra = higher id)
  SecAggSelfMask = 44,  // secure aggregation self masks, per (client, round)
  DpBatch = 45,        // DP-SGD's Poisson batch, per (client, round, extra = step)
  DpSgdNoise = 46,     // DP-SGD's gradient noise, per (client, round, extra = step)
  // Byzantine attacks (src/robust), numbered from 60.
  AttackClients = 60,  // which silos are malicious (client = round = -1)
  AttackNoise = 61,    // the gaussian attack's payload, per (client, round)
  // Update compression (src/compress), numbered from 70.
  Compress = 70,  // stochastic rounding and random-k sets, per (client, round, extra = link direction)
  // The simulated deployment (src/sim), numbered from 80.
  SystemProfile = 80,  // a silo's drawn rate, link or latency, per (client, extra = which quantity)
  SystemJitter = 81,   // the per-round factor on a silo's compute time, per (client, round)
  Misc = 99,
};

class Rng {
 public:
  // client = -1 and round = -1 mean "not client/round specific".
  Rng(std::uint64_t seed, std::int64_t client, std::int64_t round, Purpose purpose, std::uint64_t extra = 0);

  std::uint64_t next();                      // 64 random bits (xoshiro256**)
  double uniform();                          // [0, 1)
  double uniform(double a, double b) { return a + (b - a) * uniform(); }
  std::uint64_t below(std::uint64_t n);      // uniform integer in [0, n), unbiased
  double normal();                           // N(0, 1)
  double gamma(double shape);                // Gamma(shape, 1), Marsaglia-Tsang
  std::vector<double> dirichlet(const std::vector<double>& alpha);
  double lognormal(double mu, double sigma) { return std::exp(mu + sigma * normal()); }
  bool bernoulli(double p) { return uniform() < p; }

  template <typename T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }
  template <typename T>
  void shuffle(T* v, std::size_t n) {
    for (std::size_t i = n; i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }

  // Position in the stream, for checkpoints.
  std::uint64_t draws() const { return draws_; }
  void skip(std::uint64_t n) { for (std::uint64_t i = 0; i < n; ++i) next(); }

 private:
  std::uint64_t s_[4];
  std::uint64_t draws_ = 0;
  bool haveSpare_ = false;
  double spare_ = 0.0;
};

// SplitMix64 finaliser, used for key mixing.
std::uint64_t mix64(std::uint64_t x);

}  // namespace fedsilo
