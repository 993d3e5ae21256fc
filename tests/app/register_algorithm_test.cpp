// registerAlgorithm (fl/algorithm.hpp): an algorithm added by the program before parsing is an algorithm
// like the built-in ones for the command line (its name, its options, --help), and bad entries are
// refused with a message naming the problem, leaving the registry as it was.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/config_parser.hpp"
#include "core/error.hpp"
#include "fl/algorithm.hpp"
#include "fl/algorithms/fedavg.hpp"

namespace fedsilo {
namespace {

class Registered : public FedAvg {
 public:
  explicit Registered(double scale) : scale_(scale) {}
  std::string name() const override { return "test_registered"; }
  double scale() const { return scale_; }

 private:
  double scale_;
};

std::vector<OptionSpec> registeredOptions() { return {{"test_registered.scale", "1.5", "a test option in [0, 10]"}}; }
std::unique_ptr<Algorithm> makeRegistered(const ExperimentConfig& cfg) {
  return std::make_unique<Registered>(cfg.algo.getDouble("test_registered.scale", 0.0, 10.0));
}

// Once per process (gtest may run every test of this file in one process).
void registerOnce() {
  static const bool done = [] {
    registerAlgorithm({"test_registered", &makeRegistered, "a registered test algorithm", &registeredOptions});
    return true;
  }();
  (void)done;
}

ParseOutcome parse(const std::vector<std::string>& args) { return parseArguments(args); }

TEST(RegisterAlgorithm, TheEntryFollowsTheBuiltInOnesAndIsFoundByName) {
  const std::size_t before = algorithmRegistry().size();
  registerOnce();
  ASSERT_GE(algorithmRegistry().size(), before);
  EXPECT_STREQ(algorithmRegistry().back().name, "test_registered");
  ASSERT_NE(findAlgorithm("test_registered"), nullptr);
  EXPECT_NE(findAlgorithm("fedavg"), nullptr);  // the built-in table is still there
  EXPECT_STREQ(algorithmRegistry().front().name, "fedavg");
}

TEST(RegisterAlgorithm, TheCommandLineRunsItWithItsOwnOptions) {
  registerOnce();
  const ParseOutcome parsed = parse({"--algorithm", "test_registered", "--test_registered.scale", "2.5"});
  ASSERT_EQ(parsed.action, ParseOutcome::Action::Run);
  EXPECT_EQ(parsed.config.algorithm, "test_registered");
  const std::unique_ptr<Algorithm> alg = makeAlgorithm(parsed.config);
  ASSERT_EQ(alg->name(), "test_registered");
  EXPECT_DOUBLE_EQ(dynamic_cast<const Registered&>(*alg).scale(), 2.5);
  EXPECT_NE(parsed.config.resolvedIni.find("[test_registered]\nscale = 2.5"), std::string::npos)
      << parsed.config.resolvedIni;
  try {
    parse({"--algorithm", "test_registered", "--test_registered.scale", "11"});
    FAIL() << "scale = 11 was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("test_registered.scale = 11"), std::string::npos) << e.what();
  }
}

TEST(RegisterAlgorithm, HelpListsItAndItsOptions) {
  registerOnce();
  const std::string help = parse({"--help"}).text;
  EXPECT_NE(help.find("\n  test_registered: a registered test algorithm\n"), std::string::npos) << help;
  EXPECT_NE(help.find("--test_registered.scale arg (=1.5)"), std::string::npos) << help;
}

void expectRefused(const AlgorithmEntry& entry, const std::string& named) {
  const std::size_t before = algorithmRegistry().size();
  try {
    registerAlgorithm(entry);
    ADD_FAILURE() << "registered an entry that should be refused (" << named << ")";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
  }
  EXPECT_EQ(algorithmRegistry().size(), before);
}

TEST(RegisterAlgorithm, RefusesBadEntries) {
  registerOnce();
  expectRefused({"fedavg", &makeRegistered, "a second fedavg", nullptr}, "already registered");
  expectRefused({"test_registered", &makeRegistered, "twice", nullptr}, "already registered");
  for (const char* name : {"", "Upper", "9lives", "with-dash", "with space"})
    expectRefused({name, &makeRegistered, "a bad name", nullptr}, "expected lower-case letters");
  expectRefused({nullptr, &makeRegistered, "no name", nullptr}, "expected lower-case letters");
  expectRefused({"no_factory", nullptr, "no factory", nullptr}, "no factory");
  expectRefused({"no_summary", &makeRegistered, "", nullptr}, "no summary");
  expectRefused({"no_summary", &makeRegistered, nullptr, nullptr}, "no summary");
  expectRefused({"clash", &makeRegistered, "declares fedprox.mu", [] {
                   return std::vector<OptionSpec>{{"fedprox.mu", "0", "taken"}};
                 }},
                "option fedprox.mu is already declared by algorithm fedprox");
}

}  // namespace
}  // namespace fedsilo
