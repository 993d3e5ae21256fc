// The round driver's test hooks (RunHooks) on one rank: where the driver calls them, that what they
// return is what the clients train with, and that the configuration the experiment reads is never
// edited. Synthetic data (4 users, logistic regression): no files needed.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "app/config_parser.hpp"
#include "comm/communicator.hpp"
#include "fl/experiment.hpp"
#include "support/null_sink.hpp"

namespace fedsilo {
namespace {

ExperimentConfig syntheticConfig() {
  return parseArguments({"--dataset", "synthetic", "--model", "logreg", "--data.users", "4", "--clients", "4",
                         "--partition.scheme", "natural", "--rounds", "3", "--train.lr", "0.05", "--output",
                         "/tmp/unused.h5"})
      .config;
}

// Records every call; from round `divergeFrom` on (if >= 0) the clients train with lr = +Inf, which
// makes their parameters Inf/NaN.
class RecordingHooks : public RunHooks {
 public:
  explicit RecordingHooks(int divergeFrom = -1) : divergeFrom_(divergeFrom) {}
  DataConfig dataToLoad(const DataConfig& configured) const override {
    ++dataCalls;
    return configured;
  }
  TrainConfig training(int round, const TrainConfig& configured) const override {
    trainingRounds.push_back(round);
    TrainConfig t = configured;
    if (divergeFrom_ >= 0 && round >= divergeFrom_) t.lr = std::numeric_limits<double>::infinity();
    return t;
  }
  mutable int dataCalls = 0;
  mutable std::vector<int> trainingRounds;

 private:
  int divergeFrom_;
};

TEST(RoundDriverHooks, AreAskedOnceForTheDataAndOncePerClientAndRoundForTraining) {
  const ExperimentConfig cfg = syntheticConfig();
  const Communicator comm = Communicator::single();
  const RecordingHooks hooks;
  Experiment exp(cfg, comm, hooks);
  test::NullSink sink;
  exp.run(sink);
  EXPECT_EQ(hooks.dataCalls, 1);
  // 4 clients in each of rounds 0..2, then the end-of-training hooks (round = rounds).
  EXPECT_EQ(hooks.trainingRounds, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));

  // Hooks that change nothing give the run of a production configuration, bit for bit.
  Experiment plain(cfg, comm);
  plain.run(sink);
  EXPECT_EQ(plain.global(), exp.global());
  EXPECT_EQ(plain.lastClientAccuracy(), exp.lastClientAccuracy());
}

TEST(RoundDriverHooks, TheirTrainingSettingsReachTheClientsWithoutEditingTheConfiguration) {
  const ExperimentConfig cfg = syntheticConfig();
  const Communicator comm = Communicator::single();
  const RecordingHooks diverging(1);
  Experiment exp(cfg, comm, diverging);
  test::NullSink sink;
  try {
    exp.run(sink);
    FAIL() << "expected the clients to diverge in round 1";
  } catch (const NumericError& e) {
    EXPECT_NE(std::string(e.what()).find("round 1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(exp.nextRound(), 1);  // round 0 trained with the configured learning rate
  EXPECT_EQ(cfg.train.lr, 0.05);
  EXPECT_EQ(exp.context().cfg.train.lr, 0.05);
}

}  // namespace
}  // namespace fedsilo
