// What each robust aggregator costs at rank 0 per round, against a W1 round (figures, never assertions;
// docs/robustness.md, "Cost"): K updates of the W1 model (MLP 784-200-200-10, 199,210 parameters),
// drawn N(0, 0.01^2) from a keyed stream, each aggregator with its default options (Krum with f = 10),
// the median of the repetitions in thread CPU time, and the ratio to the round time given (the seconds
// of a W1 round at 2 ranks, read from `mpirun -n 2 build/fedsilo --config configs/w1_fedavg_fmnist.ini
// --rounds 3`). Also the exact reduction of the same K updates (ExactSum::addScaled), the mean's cost
// without robust aggregation.
//
//   build/bench/fedsilo_robust_bench [round_seconds (0.15)] [K (100)] [repetitions (3)]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/config.hpp"
#include "core/exact_sum.hpp"
#include "core/rng.hpp"
#include "robust/aggregator.hpp"

#include "thread_clock.hpp"

using namespace fedsilo;

namespace {

template <class F>
double medianSeconds(int reps, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double t0 = threadSeconds();
    f();
    t.push_back(threadSeconds() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const double roundSeconds = argc > 1 ? std::atof(argv[1]) : 0.15;
  const int K = argc > 2 ? std::atoi(argv[2]) : 100;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 3;
  const std::size_t n = 784 * 200 + 200 + 200 * 200 + 200 + 200 * 10 + 10;  // 199,210
  UpdateMatrix u(K, n);
  Rng rng(1, -1, 0, Purpose::Misc);
  for (float& x : u.values) x = static_cast<float>(0.01 * rng.normal());
  std::vector<double> weights(static_cast<std::size_t>(K), 1.0);
  std::vector<double> center(n, 0.0);
  std::printf("robust aggregators: K = %d updates of %zu parameters, median of %d, W1 round = %.3f s\n", K, n, reps,
              roundSeconds);
  std::printf("%-16s %12s %10s\n", "aggregator", "seconds", "of round");
  ExactSum acc(n);
  const double exact = medianSeconds(reps, [&] {
    acc.clear();
    for (int k = 0; k < K; ++k) acc.addScaled(0, u.row(k), n, weights[static_cast<std::size_t>(k)]);
  });
  std::printf("%-16s %12.4f %9.1f%%\n", "exact reduction", exact, 100.0 * exact / roundSeconds);
  for (const AggregatorEntry& e : aggregatorRegistry()) {
    AggregatorConfig cfg;
    cfg.kind = e.kind;
    cfg.byzantine = 10;
    volatile double sink = 0.0;
    const double s = medianSeconds(reps, [&] {
      sink = sink + aggregate(cfg, AggregateInput{u, weights, center}).aggregate[0];
    });
    std::printf("%-16s %12.4f %9.1f%%\n", nameOf(e.kind), s, 100.0 * s / roundSeconds);
  }
  return 0;
}
