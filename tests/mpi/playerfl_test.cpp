// Rank invariance of PLayer-FL (and the partial/personalised baselines): the same tiny experiment run
// on MPI_COMM_WORLD (1, 2 or 4 ranks, clients spread over them) and, on every rank, on a single-rank
// communicator (all clients local) must give the same split and bit-identical per-client accuracies.
#include <gtest/gtest.h>

#include "comm/communicator.hpp"
#include "fl/experiment.hpp"
#include "fl/algorithms/playerfl.hpp"
#include "app/config_parser.hpp"
#include "support/null_sink.hpp"

namespace fedsilo {
namespace {

ExperimentConfig tinyConfig(const std::string& algorithm) {
  return parseArguments({"--algorithm", algorithm, "--dataset", "fashion_mnist", "--model", "mlp", "--model.hidden",
                         "32,16", "--clients", "4", "--rounds", "2", "--seed", "5", "--partition.samples_per_client",
                         "200", "--train.batch", "32", "--pfedme.inner_steps", "2", "--output", "/tmp/unused.h5"})
      .config;
}

class RankInvariance : public ::testing::TestWithParam<std::string> {};

TEST_P(RankInvariance, SameSplitAndClientAccuraciesAsOneRank) {
  const ExperimentConfig cfg = tinyConfig(GetParam());
  Communicator world = Communicator::world();
  Communicator single = Communicator::single();
  test::NullSink sink;
  Experiment w(cfg, world);
  w.run(sink);
  Experiment s(cfg, single);
  s.run(sink);
  // This rank's clients in the world run against the same clients of the all-local run.
  const std::vector<double>& mine = w.lastClientAccuracy();
  const std::vector<double>& all = s.lastClientAccuracy();
  ASSERT_EQ(all.size(), 4u);
  const int first = w.placement().first(world.rank());
  ASSERT_EQ(static_cast<int>(mine.size()), w.placement().count(world.rank()));
  for (std::size_t i = 0; i < mine.size(); ++i)
    EXPECT_EQ(mine[i], all[static_cast<std::size_t>(first) + i]) << "client " << first + static_cast<int>(i);
  EXPECT_EQ(w.global(), s.global());
  if (auto* pw = dynamic_cast<PlayerFl*>(&w.algorithm())) {
    auto& ps = dynamic_cast<PlayerFl&>(s.algorithm());
    EXPECT_GE(pw->split(), 1);
    EXPECT_EQ(pw->split(), ps.split());
    EXPECT_EQ(pw->playerFlSplit(), ps.playerFlSplit());
    EXPECT_EQ(pw->curve(), ps.curve());
  }
  // Every rank agrees on the split and the mean accuracy (replicated state).
  std::vector<double> acc = world.allgatherv(mine);
  ASSERT_EQ(acc, all);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, RankInvariance,
                         ::testing::Values("playerfl", "playerfl_random", "pfedme", "ditto", "fedbabu",
                                           "fedlp"));

}  // namespace
}  // namespace fedsilo
