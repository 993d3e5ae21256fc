// FedCompass's server step (fl/algorithms/fedcompass.hpp) on hand-made updates, weighted and summed as
// the asynchronous driver does: x <- x + alpha sum_j s(tau_j) (n_j / N) Delta_j, N every silo's samples.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "comm/placement.hpp"
#include "fl/algorithms/fedcompass.hpp"

namespace fedsilo {
namespace {

ClientData silo(int id, Index samples) {
  ClientData c;
  c.id = id;
  for (Index i = 0; i < samples; ++i) c.train.push_back(i);
  return c;
}

// Three silos of 10, 30 and 60 training samples (N = 100) and a model of two parameters.
struct ThreeSilos {
  ExperimentConfig cfg;
  DataBundle data;
  std::vector<ClientData> clients{silo(0, 10), silo(1, 30), silo(2, 60)};
  Placement placement{3, 1};
  std::unique_ptr<FlContext> ctx;
  ThreeSilos() { ctx.reset(new FlContext{cfg, data, clients, placement, 0, {}, 2, InputSpec{}}); }
};

struct Update {
  int client;
  int staleness;
  std::vector<double> delta;
};

// The driver's part: the weighted sum of the updates, then the server step.
std::vector<float> step(FedCompass& alg, const ThreeSilos& s, std::vector<float> global,
                        const std::vector<Update>& updates) {
  std::vector<double> sum(2, 0.0);
  AsyncServerInput in;
  in.version = 5;
  in.sum = &sum;
  for (const Update& u : updates) {
    const double n = static_cast<double>(s.clients[static_cast<std::size_t>(u.client)].numTrain());
    const double w = alg.updateWeight(n, u.staleness);
    for (std::size_t i = 0; i < 2; ++i) sum[i] += w * u.delta[i];
    in.sampleSum += n;
    in.clients.push_back(u.client);
    in.staleness.push_back(u.staleness);
  }
  alg.serverStep(*s.ctx, in, global);
  return global;
}

TEST(FedCompassServer, AGroupMovesTheModelByItsStalenessWeightedShareOfAllSilosSamples) {
  ThreeSilos s;
  StalenessWeight w;
  w.alpha = 0.5;
  w.f = StalenessFunction::Polynomial;
  w.a = 1.0;  // s(tau) = 1 / (tau + 1)
  FedCompass alg(CompassOptions{}, w);
  // 0.5 * (1 * 10/100 * (1, 2) + 1/2 * 60/100 * (-1, 4)) = (0.05 - 0.15, 0.1 + 0.6) = (-0.1, 0.7).
  const std::vector<float> x = step(alg, s, {1.0f, 1.0f}, {{0, 0, {1.0, 2.0}}, {2, 1, {-1.0, 4.0}}});
  EXPECT_FLOAT_EQ(x[0], 0.9f);
  EXPECT_FLOAT_EQ(x[1], 1.7f);
}

TEST(FedCompassServer, AllSilosFreshWithAlphaOneIsFedAvgsWeightedMean) {
  ThreeSilos s;
  FedCompass alg(CompassOptions{}, StalenessWeight{});  // alpha 1, constant staleness
  // Trained models (2, 0), (0, 4), (1, 1) from x = (0, 0): FedAvg gives (0.2 + 0.6, 1.2 + 0.6).
  const std::vector<float> x =
      step(alg, s, {0.0f, 0.0f}, {{0, 0, {2.0, 0.0}}, {1, 0, {0.0, 4.0}}, {2, 0, {1.0, 1.0}}});
  EXPECT_FLOAT_EQ(x[0], 0.8f);
  EXPECT_FLOAT_EQ(x[1], 1.8f);
}

TEST(FedCompassServer, IsScheduledByTheCompassSchedulerWithItsOptions) {
  CompassOptions o;
  o.qMin = 3;
  o.qMax = 7;
  FedCompass alg(o, StalenessWeight{});
  EXPECT_FALSE(alg.acceptsConcurrencyLimit());
  AsyncPolicy policy;
  policy.clients = 2;
  policy.versions = 4;
  const AsyncSchedule sched = alg.schedule(policy, [](int, int, int steps) { return 1.0 * steps; });
  ASSERT_EQ(sched.versions.size(), 4u);
  for (const AsyncJob& j : sched.jobs) {
    EXPECT_EQ(j.localSteps, 7);  // equal silos: q_max every job
    EXPECT_DOUBLE_EQ(j.arrival - j.start, 7.0);
  }
}

}  // namespace
}  // namespace fedsilo
