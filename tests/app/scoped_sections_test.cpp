// Algorithm-scoped INI sections (`[train @ pfedme]`): their precedence between the command line and
// the plain sections, their effect on the resolved configuration, and the checks of the sections of
// algorithms that do not run.
#include <gtest/gtest.h>

#include <fstream>

#include "app/config_parser.hpp"
#include "core/error.hpp"
#include "support/parse_error.hpp"
#include "support/test_support.hpp"

using namespace fedsilo;

namespace {

std::string writeIni(const std::string& text) {
  const std::string path = test::tempDir("scoped") + "/c.ini";
  std::ofstream(path) << text;
  return path;
}

// Adam for every algorithm but pfedme, which takes plain SGD at its own lr.
const char* kProtocol =
    "algorithm = fedavg\n"
    "[train]\n"
    "optimizer = adam\namsgrad = true\nweight_decay = 1e-4\noptimizer_state = keep\nlr = 0.001\nbatch = 64\n"
    "[train @ pfedme]\n"
    "optimizer = sgd   # pfedme's update is its own inner SGD\n"
    "amsgrad = false\nweight_decay = 0\noptimizer_state = reset\nlr = 0.03\n"
    "[eval]\nbatch = 128\n";

ExperimentConfig parse(const std::string& ini, std::vector<std::string> extra = {}) {
  extra.insert(extra.begin(), {"--config", ini});
  return parseArguments(extra).config;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(ScopedSections, ApplyOnlyToTheirAlgorithm) {
  const std::string ini = writeIni(kProtocol);
  const ExperimentConfig fedavg = parse(ini);
  EXPECT_EQ(fedavg.train.optimizer, OptimizerKind::Adam);
  EXPECT_TRUE(fedavg.train.amsgrad);
  EXPECT_DOUBLE_EQ(fedavg.train.lr, 0.001);
  EXPECT_EQ(fedavg.train.optimizerState, OptimizerStateMode::Keep);
  const ExperimentConfig pfedme = parse(ini, {"--algorithm", "pfedme"});
  EXPECT_EQ(pfedme.train.optimizer, OptimizerKind::Sgd);
  EXPECT_FALSE(pfedme.train.amsgrad);
  EXPECT_DOUBLE_EQ(pfedme.train.weightDecay, 0.0);
  EXPECT_EQ(pfedme.train.optimizerState, OptimizerStateMode::Reset);
  EXPECT_DOUBLE_EQ(pfedme.train.lr, 0.03);
  EXPECT_EQ(pfedme.train.batch, 64);  // the plain [train] keys the scoped section leaves alone
  EXPECT_EQ(pfedme.eval.batch, 128);
}

TEST(ScopedSections, AlgorithmChosenInTheFileSelectsItsSections) {
  std::string text = kProtocol;
  text.replace(0, std::string("algorithm = fedavg").size(), "algorithm = pfedme");
  EXPECT_EQ(parse(writeIni(text)).train.optimizer, OptimizerKind::Sgd);
  // The command line's algorithm wins over the file's, and so do its sections.
  EXPECT_EQ(parse(writeIni(text), {"--algorithm", "fedprox"}).train.optimizer, OptimizerKind::Adam);
}

TEST(ScopedSections, CommandLineWinsOverTheScopedSection) {
  const ExperimentConfig c = parse(writeIni(kProtocol), {"--algorithm", "pfedme", "--train.lr", "0.5"});
  EXPECT_DOUBLE_EQ(c.train.lr, 0.5);
  EXPECT_EQ(c.train.optimizer, OptimizerKind::Sgd);
}

TEST(ScopedSections, ResolvedConfigurationIsTheSameKeysOnTheCommandLine) {
  std::string plain = kProtocol;
  plain.erase(plain.find("[train @ pfedme]"), plain.find("[eval]") - plain.find("[train @ pfedme]"));
  const std::string scopedIni = writeIni(kProtocol);
  const std::string scoped = parse(scopedIni, {"--algorithm", "pfedme", "--output", "o.h5"}).resolvedIni;
  const std::string given = parse(writeIni(plain), {"--algorithm", "pfedme", "--output", "o.h5", "--train.optimizer",
                                                    "sgd", "--train.amsgrad", "false", "--train.weight_decay", "0",
                                                    "--train.optimizer_state", "reset", "--train.lr", "0.03"})
                                .resolvedIni;
  EXPECT_EQ(scoped, given);
  EXPECT_TRUE(contains(scoped, "optimizer = sgd"));
  // --dry-run prints the same effective values.
  const ParseOutcome dry = parseArguments({"--config", scopedIni, "--algorithm", "pfedme", "--output", "o.h5",
                                           "--dry-run"});
  EXPECT_EQ(dry.text, given);
}

TEST(ScopedSections, OneSectionForSeveralAlgorithms) {
  const std::string ini = writeIni("[train]\nlr = 0.01\n[train @ ditto, pfedme]\nlr = 0.02\n");
  EXPECT_DOUBLE_EQ(parse(ini, {"--algorithm", "ditto"}).train.lr, 0.02);
  EXPECT_DOUBLE_EQ(parse(ini, {"--algorithm", "pfedme"}).train.lr, 0.02);
  EXPECT_DOUBLE_EQ(parse(ini, {"--algorithm", "fedavg"}).train.lr, 0.01);
}

TEST(ScopedSections, OtherSectionsThanTrainCanBeScoped) {
  const std::string ini =
      writeIni("[eval]\nbatch = 100\n[eval @ local]\nbatch = 50\n[fl @ fedavg]\nserver_optimizer = adam\n");
  EXPECT_EQ(parse(ini, {"--algorithm", "local"}).eval.batch, 50);
  EXPECT_EQ(parse(ini, {"--algorithm", "local"}).fl.serverOptimizer.kind, ServerOptimizerKind::None);
  EXPECT_EQ(parse(ini).eval.batch, 100);
  EXPECT_EQ(parse(ini).fl.serverOptimizer.kind, ServerOptimizerKind::Adam);
}

// A section of an algorithm that does not run is still checked: unknown key, bad value, bad names.
TEST(ScopedSections, SectionsOfOtherAlgorithmsAreChecked) {
  const auto error = [](const std::string& text) {
    const std::string ini = writeIni(text);
    const std::string message = test::parseError({"--config", ini, "--algorithm", "fedavg"});
    EXPECT_TRUE(contains(message, "config = " + ini) || contains(message, ini + ":")) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  };
  std::string m = error("[train]\nlr = 0.1\n[train @ pfedme]\nlrr = 0.1\n");
  EXPECT_TRUE(contains(m, ":4: [train @ pfedme]: unrecognised option 'train.lrr'")) << m;
  m = error("[train @ pfedme]\noptimizer = sgdd\n");
  EXPECT_TRUE(contains(m, "[train @ pfedme]") && contains(m, "train.optimizer = sgdd")) << m;
  m = error("[train @ pfedme]\nlr = -1\n");
  EXPECT_TRUE(contains(m, "[train @ pfedme]") && contains(m, "train.lr = -1")) << m;
  m = error("[train @ pfedmee]\nlr = 0.1\n");
  EXPECT_TRUE(contains(m, "[train @ pfedmee]") && contains(m, "unknown algorithm 'pfedmee'")) << m;
  m = error("[train @ ditto, ]\nlr = 0.1\n");
  EXPECT_TRUE(contains(m, "unknown algorithm ''")) << m;
  m = error("[train @ ]\nlr = 0.1\n");
  EXPECT_TRUE(contains(m, "naming an algorithm")) << m;
  m = error("[pfedme @ pfedme]\nlambda = 15\n");
  EXPECT_TRUE(contains(m, "section 'pfedme' cannot be scoped")) << m;
  m = error("[@ pfedme]\nrounds = 5\n");
  EXPECT_TRUE(contains(m, "section '' cannot be scoped")) << m;
  m = error("[train @ pfedme]\nlr = 0.1\nlr = 0.2\n");
  EXPECT_TRUE(contains(m, "[train @ pfedme]") && contains(m, "train.lr")) << m;
  m = error("[train @ pfedme]\nlr = 0.1\n[train @ ditto,pfedme]\nbatch = 8\n");
  EXPECT_TRUE(contains(m, "line 3") && contains(m, "already at line 1")) << m;
  // A combination the generic rules refuse: amsgrad kept from [train] under the section's sgd.
  m = error("[train]\noptimizer = adam\namsgrad = true\n[train @ pfedme]\noptimizer = sgd\n");
  EXPECT_TRUE(contains(m, "[train @ pfedme]") && contains(m, "as pfedme would run") && contains(m, "train.amsgrad"))
      << m;
}

TEST(ScopedSections, ErrorsInTheRunningAlgorithmsSectionNameIt) {
  const std::string ini = writeIni("[train]\nlr = 0.1\n[train @ pfedme]\nbatch = 0\n");
  const std::string m = test::parseError({"--config", ini, "--algorithm", "pfedme"});
  EXPECT_TRUE(contains(m, "[train @ pfedme] (line 3)") && contains(m, "train.batch = 0")) << m;
  const std::string text = writeIni("[train]\nlr = 0.1\n[train @ pfedme]\nlr = fast\n");
  const std::string notNumber = test::parseError({"--config", text, "--algorithm", "pfedme"});
  EXPECT_TRUE(contains(notNumber, "[train @ pfedme] (line 3)") && contains(notNumber, "fast")) << notNumber;
  // A bad value of the plain sections is not the scoped section's.
  const std::string plain = writeIni("[train]\nlr = fast\n[train @ pfedme]\nbatch = 8\n");
  EXPECT_FALSE(contains(test::parseError({"--config", plain, "--algorithm", "pfedme"}), "[train @ pfedme]"));
  // The algorithm's own checks see the effective values: pfedme refuses Adam from the plain section.
  const std::string adam = writeIni("[train]\noptimizer = adam\n[train @ fedavg]\nlr = 0.01\n");
  EXPECT_TRUE(contains(test::parseError({"--config", adam, "--algorithm", "pfedme"}), "train.optimizer = adam"));
}

TEST(ScopedSections, PlainSectionsKeepTheirRules) {
  // A header without '@' stays a plain section, and a key after a scoped section's end is plain again.
  const std::string ini = writeIni("[train @ pfedme]\nlr = 0.02\n[train]\nlr = 0.01\n");
  EXPECT_DOUBLE_EQ(parse(ini).train.lr, 0.01);
  EXPECT_DOUBLE_EQ(parse(ini, {"--algorithm", "pfedme"}).train.lr, 0.02);
  // '@' in a comment does not scope a section.
  EXPECT_DOUBLE_EQ(parse(writeIni("[train]  # @ pfedme\nlr = 0.04\n"), {"--algorithm", "fedavg"}).train.lr, 0.04);
}
