// More ranks than clients: 2 clients at 1, 2 and 4 ranks (at 4, two ranks own no client and only take
// part in the collectives) give the records of a single-rank run, bit for bit, for an iterative, a
// personalised, a data-parallel and two one-shot algorithms.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "support/world_vs_single.hpp"

namespace fedsilo {
namespace {

constexpr int kClients = 2;

// Iterative algorithms run 2 rounds; a one-shot one the count its registry entry declares.
ExperimentConfig twoClients(const std::string& algorithm) {
  return test::parseWithRegistryRounds(
      {"--algorithm", algorithm, "--clients", std::to_string(kClients), "--model.hidden", "16",
       "--partition.samples_per_client", "150", "--partition.alpha", "0.5", "--train.batch", "16", "--eval.batch",
       "100", "--gems.samples", "15", "--gems.r_max", "200", "--gems.public_samples", "30", "--gems.finetune_sizes",
       "0,20", "--gems.clusters", "4", "--gems.intersect_steps", "500"},
      2);
}

class MoreRanksThanClients : public ::testing::TestWithParam<const char*> {};

TEST_P(MoreRanksThanClients, GiveTheRecordsOfOneRank) {
  const Communicator world = Communicator::world();
  std::vector<int> ownClients;  // this rank's client count: in the world run, then in the single run
  const auto countOwn = [&ownClients](Experiment& exp, test::RunRecords&) {
    ownClients.push_back(exp.placement().count(exp.context().rank));
  };
  const test::WorldAndSingle runs = test::runOnWorldAndAlone(twoClients(GetParam()), countOwn);
  EXPECT_TRUE(test::identicalRecords(runs.world, runs.single));
  ASSERT_EQ(runs.world.lastClientAccuracy.size(), static_cast<std::size_t>(kClients));
  ASSERT_EQ(ownClients.size(), 2u);
  EXPECT_EQ(ownClients[1], kClients);
  // At 4 ranks some rank really is idle (the placement did not, say, fall back to one rank).
  const int fewest = world.allreduceMin(ownClients[0]);
  if (world.size() > kClients) {
    EXPECT_EQ(fewest, 0);
  }
  EXPECT_EQ(world.allreduceSum(ownClients[0]), kClients);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, MoreRanksThanClients,
                         ::testing::Values("fedavg", "ditto", "global", "average", "gems"));

}  // namespace
}  // namespace fedsilo
