// AlgorithmEntry::oneShotRounds: the round count a one-shot algorithm runs is the one its factory
// accepts, and every other count is refused; iterative algorithms declare none.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/config_parser.hpp"
#include "core/error.hpp"
#include "fl/algorithm.hpp"

namespace fedsilo {
namespace {

ExperimentConfig configFor(const std::string& algorithm, const std::vector<std::string>& extra) {
  std::vector<std::string> args{"--algorithm", algorithm};
  args.insert(args.end(), extra.begin(), extra.end());
  return parseArguments(args).config;  // rounds = 20 (the default) is accepted for now
}

void expectAcceptsOnly(const AlgorithmEntry& e, ExperimentConfig cfg) {
  const int rounds = e.oneShotRounds(cfg);
  ASSERT_GE(rounds, 1) << e.name;
  cfg.rounds = rounds;
  EXPECT_NO_THROW(e.make(cfg)) << e.name << " at its own " << rounds << " round(s)";
  for (int other : {rounds + 1, rounds == 1 ? 2 : 1}) {
    cfg.rounds = other;
    EXPECT_THROW(e.make(cfg), ConfigError) << e.name << " accepted rounds = " << other;
  }
}

TEST(RegistryRounds, OneShotEntriesDeclareTheCountTheirFactoryAccepts) {
  int oneShot = 0;
  for (const auto& e : algorithmRegistry()) {
    if (!e.oneShotRounds) continue;
    ++oneShot;
    expectAcceptsOnly(e, configFor(e.name, {"--rounds", "1", "--model.hidden", "16,16"}));
  }
  EXPECT_EQ(oneShot, 6);  // gems and its five baselines
}

TEST(RegistryRounds, GemsNeedsTwoRoundsNeuronWiseAndOneOtherwise) {
  const AlgorithmEntry* gems = findAlgorithm("gems");
  ASSERT_NE(gems, nullptr);
  ExperimentConfig neuron = configFor("gems", {"--rounds", "2", "--model.hidden", "16"});
  EXPECT_EQ(gems->oneShotRounds(neuron), 2);
  expectAcceptsOnly(*gems, neuron);
  ExperimentConfig convex = configFor("gems", {"--rounds", "1", "--model", "logreg"});
  EXPECT_EQ(gems->oneShotRounds(convex), 1);
  expectAcceptsOnly(*gems, convex);
}

TEST(RegistryRounds, IterativeAlgorithmsDeclareNone) {
  for (const char* name : {"fedavg", "local", "ditto", "playerfl", "alpha_fedavg"}) {
    const AlgorithmEntry* e = findAlgorithm(name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ(e->oneShotRounds, nullptr) << name;
  }
  EXPECT_EQ(findAlgorithm("no_such_algorithm"), nullptr);
}

}  // namespace
}  // namespace fedsilo
