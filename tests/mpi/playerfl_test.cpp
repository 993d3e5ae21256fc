// Rank invariance of PLayer-FL (and the partial/personalised baselines): the same tiny experiment run
// on MPI_COMM_WORLD (1, 2 or 4 ranks, clients spread over them) and, on every rank, on a single-rank
// communicator (all clients local) must give the same split and bit-identical per-client accuracies.
#include <gtest/gtest.h>

#include "app/config_parser.hpp"
#include "fl/algorithms/playerfl.hpp"
#include "support/world_vs_single.hpp"

namespace fedsilo {
namespace {

ExperimentConfig tinyConfig(const std::string& algorithm) {
  return parseArguments({"--algorithm", algorithm, "--dataset", "fashion_mnist", "--model", "mlp", "--model.hidden",
                         "32,16", "--clients", "4", "--rounds", "2", "--seed", "5", "--partition.samples_per_client",
                         "200", "--train.batch", "32", "--pfedme.inner_steps", "2", "--output", "/tmp/unused.h5"})
      .config;
}

// PLayer-FL's replicated state, which the records do not hold, goes into RunRecords::extra.
void keepSplit(Experiment& exp, test::RunRecords& out) {
  if (const auto* p = dynamic_cast<const PlayerFl*>(&exp.algorithm())) {
    out.extra["split"] = {static_cast<double>(p->split())};
    out.extra["playerfl_split"] = {static_cast<double>(p->playerFlSplit())};
    out.extra["curve"] = p->curve();
  }
}

class RankInvariance : public ::testing::TestWithParam<std::string> {};

TEST_P(RankInvariance, SameSplitAndClientAccuraciesAsOneRank) {
  const test::WorldAndSingle runs = test::runOnWorldAndAlone(tinyConfig(GetParam()), keepSplit);
  // The per-client accuracies (gathered over the ranks), the global model, and PLayer-FL's split and
  // sensitivity curve, bit for bit.
  EXPECT_TRUE(test::identicalRecords(runs.world, runs.single));
  ASSERT_EQ(runs.single.lastClientAccuracy.size(), 4u);
  if (GetParam().rfind("playerfl", 0) == 0) {
    ASSERT_EQ(runs.world.extra.count("split"), 1u);
    EXPECT_GE(runs.world.extra.at("split").at(0), 1.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, RankInvariance,
                         ::testing::Values("playerfl", "playerfl_random", "pfedme", "ditto", "fedbabu",
                                           "fedlp"));

}  // namespace
}  // namespace fedsilo
