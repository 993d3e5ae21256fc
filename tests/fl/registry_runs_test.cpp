// Every entry of the algorithm registry, by name, with its own options at their defaults, runs through
// the in-process driver on a single-rank communicator: two rounds, or for a one-shot algorithm the
// count its registry entry declares for the configuration. A new entry is covered without editing
// this file. Synthetic data (4 users, a two-hidden-layer MLP, which PLayer-FL and FedBABU need): no
// files needed.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fl/algorithm.hpp"
#include "support/test_support.hpp"
#include "support/world_vs_single.hpp"

namespace fedsilo {
namespace {

constexpr int kClients = 4;

std::vector<std::string> registryNames() {
  std::vector<std::string> names;
  for (const auto& e : algorithmRegistry()) names.emplace_back(e.name);
  return names;
}

// Only the experiment is made small; the algorithm's own options keep their defaults.
ExperimentConfig smallRun(const AlgorithmEntry& entry) {
  return test::parseWithRegistryRounds({"--algorithm", entry.name, "--dataset", "synthetic", "--data.users",
                                        std::to_string(kClients), "--clients", std::to_string(kClients),
                                        "--partition.scheme", "natural", "--model", "mlp", "--model.hidden", "8,8"},
                                       2);
}

class RegistryEntry : public ::testing::TestWithParam<std::string> {};

TEST_P(RegistryEntry, RunsItsRoundsWithDefaultOptions) {
  const AlgorithmEntry* entry = findAlgorithm(GetParam());
  ASSERT_NE(entry, nullptr);
  const ExperimentConfig cfg = smallRun(*entry);
  ASSERT_GE(cfg.rounds, 1);
  std::string builtName;
  int nextRound = -1;
  bool hasGlobal = false;
  const Communicator single = Communicator::single();
  const test::RunRecords rec = test::runAndGather(cfg, single, [&](Experiment& exp, test::RunRecords&) {
    builtName = exp.algorithm().name();
    nextRound = exp.nextRound();
    hasGlobal = exp.algorithm().hasGlobalModel();
  });
  EXPECT_EQ(builtName, GetParam()) << "the registry built another algorithm";
  EXPECT_EQ(nextRound, cfg.rounds);
  // One record row per round, rounds numbered 0, 1, ...
  std::vector<double> rounds;
  for (int t = 0; t < cfg.rounds; ++t) rounds.push_back(t);
  EXPECT_EQ(rec.roundScalars.at("round"), rounds);
  ASSERT_EQ(rec.roundClients.at("client_accuracy").size(), static_cast<std::size_t>(cfg.rounds));
  // Every client evaluated at the end, with an accuracy.
  ASSERT_EQ(rec.lastClientAccuracy.size(), static_cast<std::size_t>(kClients));
  for (double a : rec.lastClientAccuracy) EXPECT_TRUE(a >= 0.0 && a <= 1.0) << a;
  if (hasGlobal) {
    ASSERT_FALSE(rec.global.empty());
    for (float w : rec.global) ASSERT_TRUE(std::isfinite(w)) << "a non-finite global parameter";
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, RegistryEntry, ::testing::ValuesIn(registryNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(Registry, NamesAreUniqueAndFoundByName) {
  const std::vector<std::string> names = registryNames();
  ASSERT_FALSE(names.empty());
  for (std::size_t i = 0; i < names.size(); ++i) {
    for (std::size_t j = i + 1; j < names.size(); ++j) EXPECT_NE(names[i], names[j]);
    const AlgorithmEntry* e = findAlgorithm(names[i]);
    ASSERT_NE(e, nullptr) << names[i];
    EXPECT_EQ(e->name, names[i]);
  }
}

}  // namespace
}  // namespace fedsilo
