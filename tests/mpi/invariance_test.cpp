// Rank invariance: the same config at 1, 2 and 4 ranks gives identical per-client accuracies and
// the same global model. Each rank also runs the same experiment alone (Communicator::single(), all
// clients local) and the distributed run must match it exactly (support/world_vs_single.hpp).
#include <gtest/gtest.h>

#include "app/config_parser.hpp"
#include "support/world_vs_single.hpp"

using namespace fedsilo;

namespace {

ExperimentConfig smallConfig(const std::string& algorithm) {
  ExperimentConfig c = parseArguments({"--algorithm", algorithm, "--clients", "6", "--rounds", "3",
                                       "--model.hidden", "32", "--partition.samples_per_client", "150",
                                       "--partition.alpha", "0.3", "--fl.clients_per_round", "4",
                                       "--train.batch", "16", "--eval.batch", "100"})
                           .config;
  return c;
}

}  // namespace

class Invariance : public ::testing::TestWithParam<const char*> {};

TEST_P(Invariance, DistributedRunEqualsSingleProcessRun) {
  const test::WorldAndSingle r = test::runOnWorldAndAlone(smallConfig(GetParam()));
  // Bit-identical records: per-client accuracies, the global model, the aggregation weights, ...
  EXPECT_TRUE(test::identicalRecords(r.world, r.single));
  ASSERT_EQ(r.world.lastClientAccuracy.size(), 6u);
  ASSERT_EQ(r.single.lastClientAccuracy.size(), 6u);
  const std::vector<double>& weights = r.world.roundClients.at("weight").back();  // last round, all clients
  // Sanity: the last round sampled 4 of 6 clients.
  int participants = 0;
  for (double w : weights) participants += w > 0 ? 1 : 0;
  if (std::string(GetParam()) != "local") {
    EXPECT_EQ(participants, 4);
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, Invariance, ::testing::Values("fedavg", "local"));
