// What the algorithms and the round driver tell the Announcer (fl/announcer.hpp), on one rank:
// decisions as they are made (PLayer-FL's split, alpha-FedAvg's alpha and exclusions, GEMS widths,
// radii and fine-tuning accuracies), each naming the value the algorithm then uses, and the progress
// of every round's phases with the work they hold.
#include <gtest/gtest.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "app/config_parser.hpp"
#include "comm/communicator.hpp"
#include "core/error.hpp"
#include "fl/algorithms/alpha_fedavg.hpp"
#include "fl/algorithms/gems.hpp"
#include "fl/algorithms/playerfl.hpp"
#include "fl/announcer.hpp"
#include "fl/experiment.hpp"
#include "support/null_sink.hpp"

namespace fedsilo {
namespace {

struct Phase {
  int round;
  RoundPhase phase;
  PhaseSize mine, all;
  std::int64_t clientsDone = 0, samplesDone = 0;
};

class RecordingAnnouncer final : public Announcer {
 public:
  void decision(const std::string& text) override { decisions.push_back(text); }
  void warning(const std::string& text) override { warnings.push_back(text); }
  void rankWarning(const std::string& text) override { warnings.push_back(text); }
  void startPhase(int round, RoundPhase phase, const PhaseSize& mine, const PhaseSize& all) override {
    phases.push_back({round, phase, mine, all});
  }
  void clientDone(std::int64_t samples) override {
    phases.back().clientsDone += 1;
    phases.back().samplesDone += samples;
  }
  // The decisions that contain `part`.
  std::vector<std::string> with(const std::string& part) const {
    std::vector<std::string> out;
    for (const auto& d : decisions)
      if (d.find(part) != std::string::npos) out.push_back(d);
    return out;
  }
  std::vector<std::string> decisions, warnings;
  std::vector<Phase> phases;
};

ExperimentConfig tinyConfig(const std::string& algorithm, std::vector<std::string> extra) {
  std::vector<std::string> args{"--algorithm", algorithm, "--dataset", "fashion_mnist", "--clients", "4",
                                "--model.hidden", "16,8", "--partition.samples_per_client", "200", "--seed", "2",
                                "--train.batch", "32", "--eval.batch", "200", "--output", "/tmp/unused.h5"};
  args.insert(args.end(), extra.begin(), extra.end());
  return parseArguments(args).config;
}

struct AnnouncedRun {
  ExperimentConfig cfg;
  Communicator comm = Communicator::single();
  RecordingAnnouncer said;
  std::unique_ptr<Experiment> exp;
  explicit AnnouncedRun(ExperimentConfig c) : cfg(std::move(c)) {
    exp = std::make_unique<Experiment>(cfg, comm, noRunHooks(), said);
    test::NullSink sink;
    exp->run(sink);
  }
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string g4(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", x);
  return b;
}

TEST(Progress, EveryPhaseReportsItsWorkAndEveryClient) {
  AnnouncedRun run(tinyConfig("fedavg", {"--rounds", "3", "--train.epochs", "2", "--eval.every", "2"}));
  const auto& clients = run.exp->context().clients;
  std::int64_t trainSamples = 0, testSamples = 0;
  for (const auto& c : clients) {
    trainSamples += static_cast<std::int64_t>(c.train.size());
    testSamples += static_cast<std::int64_t>(c.test.size());
  }
  // Training in rounds 0..2; evaluation in rounds 0 and 2 (eval.every = 2, the last always), then
  // the final evaluation (round = rounds).
  ASSERT_EQ(run.said.phases.size(), 6u);
  const std::vector<std::pair<int, RoundPhase>> expected{
      {0, RoundPhase::Training}, {0, RoundPhase::Evaluating}, {1, RoundPhase::Training},
      {2, RoundPhase::Training}, {2, RoundPhase::Evaluating}, {3, RoundPhase::Evaluating}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const Phase& p = run.said.phases[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(p.round, expected[i].first);
    EXPECT_EQ(p.phase, expected[i].second);
    EXPECT_EQ(p.mine.clients, 4);  // one rank: all of it is rank 0's
    EXPECT_EQ(p.all.clients, 4);
    EXPECT_EQ(p.clientsDone, 4);
    if (p.phase == RoundPhase::Training) {
      EXPECT_EQ(p.all.samples, trainSamples);
      EXPECT_EQ(p.samplesDone, 2 * trainSamples);  // train.epochs = 2: the samples actually trained
    } else {
      EXPECT_EQ(p.all.samples, testSamples);
      EXPECT_EQ(p.samplesDone, testSamples);
    }
  }
}

TEST(Progress, TrainingCountsOnlyTheSelectedClients) {
  AnnouncedRun run(tinyConfig("fedavg", {"--rounds", "2", "--fl.clients_per_round", "2"}));
  for (const Phase& p : run.said.phases) {
    if (p.phase != RoundPhase::Training) continue;
    EXPECT_EQ(p.all.clients, 2);
    EXPECT_EQ(p.clientsDone, 2);
  }
}

TEST(Progress, AnnouncingChangesNoResult) {
  const ExperimentConfig cfg = tinyConfig("fedavg", {"--rounds", "2"});
  AnnouncedRun announced(cfg);
  const Communicator comm = Communicator::single();
  Experiment silent(cfg, comm);
  test::NullSink sink;
  silent.run(sink);
  EXPECT_EQ(announced.exp->global(), silent.global());
  EXPECT_EQ(announced.exp->lastClientAccuracy(), silent.lastClientAccuracy());
}

TEST(Decisions, PlayerFlAnnouncesTheSplitItChoseWithTheCurve) {
  AnnouncedRun run(tinyConfig("playerfl", {"--rounds", "2"}));
  const auto& alg = dynamic_cast<const PlayerFl&>(run.exp->algorithm());
  const auto said = run.said.with("playerfl: round 0: split layer ");
  ASSERT_EQ(said.size(), 1u) << ::testing::PrintToString(run.said.decisions);
  EXPECT_TRUE(contains(said[0], "split layer " + std::to_string(alg.split()) + " of 3")) << said[0];
  EXPECT_TRUE(contains(said[0], "federation curve [" + g4(alg.curve()[0]))) << said[0];
  EXPECT_EQ(run.said.decisions.size(), 1u);  // decided once
}

TEST(Decisions, PlayerFlAnnouncesAnExplicitSplitAtSetUp) {
  AnnouncedRun run(tinyConfig("playerfl", {"--rounds", "1", "--playerfl.split", "fc2"}));
  ASSERT_EQ(run.said.decisions.size(), 1u);
  EXPECT_TRUE(contains(run.said.decisions[0], "split layer 2 of 3 (fc2): federated fc1, fc2; local fc3")) << run.said.decisions[0];
  EXPECT_TRUE(contains(run.said.decisions[0], "playerfl.split = fc2")) << run.said.decisions[0];
}

TEST(Decisions, PlayerFlRandomNamesTheSplitItAvoided) {
  AnnouncedRun run(tinyConfig("playerfl_random", {"--rounds", "1", "--playerfl.split", "2"}));
  const auto& alg = dynamic_cast<const PlayerFl&>(run.exp->algorithm());
  ASSERT_EQ(run.said.decisions.size(), 1u);
  EXPECT_TRUE(contains(run.said.decisions[0], "playerfl_random: split layer " + std::to_string(alg.split())));
  EXPECT_TRUE(contains(run.said.decisions[0], "avoiding PLayer-FL's split 2")) << run.said.decisions[0];
}

TEST(Decisions, AlphaFedAvgAnnouncesTheAlphaItUsesAndEveryExclusion) {
  AnnouncedRun run(tinyConfig("alpha_fedavg",
                     {"--rounds", "4", "--alpha_fedavg.search_round", "1", "--alpha_fedavg.verify_samples", "20",
                      "--alpha_fedavg.verify_tolerance", "0.3", "--alpha_fedavg.verify_strikes", "2",
                      "--alpha_fedavg.liars", "1", "--alpha_fedavg.liar_boost", "0.9", "--data.split", "0.6,0.2,0.2"}));
  const auto& alg = dynamic_cast<const AlphaFedAvg&>(run.exp->algorithm());
  ASSERT_TRUE(alg.alphaKnown());
  const auto alpha = run.said.with("alpha_fedavg: round 1: alpha = " + fmt(alg.alpha()) + ", used from round 2");
  EXPECT_EQ(alpha.size(), 1u) << ::testing::PrintToString(run.said.decisions);
  // Each excluded client is announced once, the others never.
  for (int k = 0; k < 4; ++k) {
    const auto said = run.said.with("client " + std::to_string(k) + " excluded");
    EXPECT_EQ(said.size(), static_cast<std::size_t>(alg.excluded()[k])) << "client " << k;
  }
  EXPECT_EQ(alg.excluded()[1], 1) << "the liar was not excluded: the test shows nothing";
}

TEST(Decisions, AlphaFedAvgAnnouncesAReferenceAlphaBeforeTraining) {
  AnnouncedRun run(tinyConfig("alpha_fedavg", {"--rounds", "1", "--alpha_fedavg.reference_accuracy", "0.9,0.5,0.7,0.8"}));
  const auto& alg = dynamic_cast<const AlphaFedAvg&>(run.exp->algorithm());
  EXPECT_EQ(run.said.with("alpha_fedavg: alpha = " + fmt(alg.alpha()) + " before training").size(), 1u)
      << ::testing::PrintToString(run.said.decisions);
}

TEST(Decisions, ConvexGemsAnnouncesTheRadiiAndTheFineTuningAccuracies) {
  AnnouncedRun run(tinyConfig("gems", {"--model", "logreg", "--gems.local_epochs", "2", "--gems.samples", "10",
                              "--gems.finetune_sizes", "0,20", "--data.split", "0.6,0.2,0.2"}));
  const auto& alg = dynamic_cast<const Gems&>(run.exp->algorithm());
  std::string radii;
  for (double r : alg.radii()) radii += (radii.empty() ? "" : ", ") + g4(r);
  EXPECT_EQ(run.said.with("gems: round 0: radii found per client " + radii + ";").size(), 1u)
      << ::testing::PrintToString(run.said.decisions);
  const auto& acc = alg.finetuneAccuracy();
  ASSERT_EQ(acc.size(), 2u);
  EXPECT_EQ(run.said.with(fmt("(S -> accuracy): 0 -> ", acc[0], ", 20 -> ", acc[1])).size(), 1u)
      << ::testing::PrintToString(run.said.decisions);
}

TEST(Decisions, NeuronWiseGemsAnnouncesTheHiddenWidth) {
  AnnouncedRun run(tinyConfig("gems", {"--model.hidden", "8", "--gems.local_epochs", "2", "--gems.samples", "10",
                              "--gems.clusters", "6", "--gems.head_epochs", "1", "--data.split", "0.6,0.2,0.2"}));
  const auto& alg = dynamic_cast<const Gems&>(run.exp->algorithm());
  EXPECT_EQ(run.said.with("gems: round 0: hidden layer of width " + std::to_string(alg.hiddenWidth()) +
                          " from 32 neuron balls (4 clients x 8) in 6 k-means clusters")
                .size(),
            1u)
      << ::testing::PrintToString(run.said.decisions);
  EXPECT_EQ(run.said.with("gems: round 1: radii found per client").size(), 1u);
}

}  // namespace
}  // namespace fedsilo
