// `fedsilo epsilon`: output format, calibration mode, and one-line errors with exit code 2.
#include "privacy/epsilon_command.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "privacy/calibration.hpp"
#include "privacy/rdp_accountant.hpp"

using namespace fedsilo;

namespace {

struct Outcome {
  int code;
  std::string out, err;
};

Outcome runCommand(std::vector<std::string> args) {
  args.insert(args.begin(), "epsilon");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = runEpsilonCommand(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

double valueAfter(const std::string& text, const std::string& key) {
  const auto pos = text.find(key + " = ");
  if (pos == std::string::npos) return -1.0;
  return std::stod(text.substr(pos + key.size() + 3));
}

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

// TF Privacy's compute_dp_sgd_privacy test case: n = 60000, batch 150, sigma 1.3, 15 epochs (6000
// steps), delta 1e-5 -> epsilon 0.7242234 at order 19 (the accountant test names the source).
TEST(EpsilonCommand, PrintsEpsilonAndTheOptimalOrder) {
  const Outcome o =
      runCommand({"--sample_rate", "0.0025", "--noise_multiplier", "1.3", "--steps", "6000", "--delta", "1e-5"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.err, "");
  EXPECT_NEAR(valueAfter(o.out, "epsilon"), 0.724223, 1e-6);
  EXPECT_EQ(valueAfter(o.out, "optimal RDP order"), 19.0);

  const Outcome classic = runCommand({"--sample_rate", "0.0025", "--noise_multiplier", "1.3", "--steps", "6000",
                                      "--delta", "1e-5", "--conversion", "classic"});
  EXPECT_EQ(classic.code, 0);
  EXPECT_GT(valueAfter(classic.out, "epsilon"), valueAfter(o.out, "epsilon"));
}

TEST(EpsilonCommand, TargetEpsilonPrintsTheCalibratedNoiseMultiplier) {
  const Outcome o =
      runCommand({"--sample_rate", "0.04", "--target_epsilon", "8", "--steps", "2250", "--delta", "1e-5"});
  EXPECT_EQ(o.code, 0) << o.err;
  const double z = valueAfter(o.out, "noise_multiplier");
  EXPECT_NEAR(z, calibrateNoiseMultiplier(0.04, 2250, 1e-5, 8.0).noiseMultiplier, 1e-5);
  EXPECT_LE(sgmEpsilon(0.04, z, 2250, 1e-5).epsilon, 8.0 + 1e-4);  // printed with 6 digits
}

TEST(EpsilonCommand, HelpExitsZero) {
  const Outcome o = runCommand({"--help"});
  EXPECT_EQ(o.code, 0);
  EXPECT_NE(o.out.find("--sample_rate"), std::string::npos);
  EXPECT_NE(o.out.find("--target_epsilon"), std::string::npos);
}

TEST(EpsilonCommand, BadValuesGiveOneLineAndExitTwo) {
  const std::vector<std::string> good = {"--sample_rate", "0.01", "--noise_multiplier", "1.0", "--steps", "100",
                                         "--delta",       "1e-5"};
  struct Bad {
    std::string key, value, mention;
  };
  const Bad cases[] = {
      {"--sample_rate", "0", "--sample_rate 0"},
      {"--sample_rate", "1.5", "(0, 1]"},
      {"--sample_rate", "abc", "abc"},
      {"--sample_rate", "nan", "nan"},
      {"--noise_multiplier", "-1", "-1"},
      {"--noise_multiplier", "inf", "inf"},
      {"--steps", "0", "--steps 0"},
      {"--steps", "2.5", "2.5"},
      {"--steps", "99999999999999999999", "9999"},
      {"--delta", "1", "(0, 1)"},
      {"--delta", "0", "--delta 0"},
      {"--conversion", "tight", "tight"},
  };
  for (const Bad& b : cases) {
    std::vector<std::string> args = good;
    const auto it = std::find(args.begin(), args.end(), b.key);
    if (it != args.end())
      *(it + 1) = b.value;
    else
      args.insert(args.end(), {b.key, b.value});
    const Outcome o = runCommand(args);
    EXPECT_EQ(o.code, 2) << b.key << " " << b.value;
    EXPECT_EQ(o.out, "") << b.key << " " << b.value;
    EXPECT_EQ(lines(o.err), 1) << o.err;
    EXPECT_NE(o.err.find(b.mention), std::string::npos) << o.err;
  }
  // Missing, conflicting and unknown options.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--sample_rate", "0.01", "--steps", "100", "--delta", "1e-5"},
        std::vector<std::string>{"--noise_multiplier", "1", "--steps", "100", "--delta", "1e-5"},
        std::vector<std::string>{"--sample_rate", "0.01", "--noise_multiplier", "1", "--target_epsilon", "2", "--steps",
                                 "100", "--delta", "1e-5"},
        std::vector<std::string>{"--sample_rate", "0.01", "--noise_multiplier", "1", "--steps", "100", "--delta",
                                 "1e-5", "--bogus", "1"},
        std::vector<std::string>{"stray"}}) {
    const Outcome o = runCommand(args);
    EXPECT_EQ(o.code, 2) << o.out;
    EXPECT_EQ(lines(o.err), 1) << o.err;
  }
}
