// The distribution specs of the system model: each kind's value per client, keyed draws, and every bad
// spec a one-line ConfigError naming the option.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "sim/distribution.hpp"

using namespace fedsilo;

namespace {

const ValueRange kRate{0.0, true};      // > 0
const ValueRange kLatency{0.0, false};  // >= 0

DistributionSpec parse(const std::string& text, int clients = 4, ValueRange range = kRate) {
  return parseDistribution("system.compute_gflops", text, clients, range);
}

// The message of the ConfigError parsing `text` throws ("" when it does not throw).
std::string errorOf(const std::string& text, int clients = 4, ValueRange range = kRate) {
  try {
    parse(text, clients, range);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// A file in the test's temporary folder holding `text`, removed at the end of its scope.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text) {
    path = testing::TempDir() + "sim_values_" + std::to_string(::getpid()) + "_" +
           testing::UnitTest::GetInstance()->current_test_info()->name() + ".csv";
    std::ofstream(path) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

}  // namespace

TEST(Distribution, ConstantAndBareNumberGiveEveryClientTheValue) {
  for (const char* text : {"constant:12.5", "12.5", " constant : 12.5 "}) {
    const DistributionSpec s = parse(text);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(drawValue(s, 1, k, 1), 12.5) << text;
  }
}

TEST(Distribution, ListGivesClientKItemKModLength) {
  const DistributionSpec s = parse("list:10,20,30");
  EXPECT_EQ(drawValue(s, 1, 0, 1), 10.0);
  EXPECT_EQ(drawValue(s, 1, 2, 1), 30.0);
  EXPECT_EQ(drawValue(s, 1, 3, 1), 10.0);
  EXPECT_EQ(drawValue(s, 1, 7, 1), 20.0);
}

TEST(Distribution, UniformAndLognormalAreTheKeyedStreamsDraws) {
  const DistributionSpec u = parse("uniform:50,500");
  const DistributionSpec l = parse("lognormal:0.5,0.25");
  for (int k = 0; k < 4; ++k) {
    Rng ru(9, k, -1, Purpose::SystemProfile, 3);
    EXPECT_EQ(drawValue(u, 9, k, 3), 50.0 + 450.0 * ru.uniform());
    Rng rl(9, k, -1, Purpose::SystemProfile, 3);
    EXPECT_EQ(drawValue(l, 9, k, 3), std::exp(0.5 + 0.25 * rl.normal()));
  }
  // The key, not the order of the calls, decides: client 2 first or last gives the same value.
  const double before = drawValue(u, 9, 2, 3);
  drawValue(u, 9, 0, 3);
  EXPECT_EQ(drawValue(u, 9, 2, 3), before);
  // Another seed, client or quantity is another stream.
  EXPECT_NE(drawValue(u, 10, 2, 3), before);
  EXPECT_NE(drawValue(u, 9, 1, 3), before);
  EXPECT_NE(drawValue(u, 9, 2, 4), before);
}

TEST(Distribution, FileGivesEachClientItsRow) {
  TempFile f("client,value\n2,30\n0,10\n\n1,20.5\n3,40\n");
  const DistributionSpec s = parse("file:" + f.path);
  EXPECT_EQ(drawValue(s, 1, 0, 1), 10.0);
  EXPECT_EQ(drawValue(s, 1, 1, 1), 20.5);
  EXPECT_EQ(drawValue(s, 1, 2, 1), 30.0);
  EXPECT_EQ(drawValue(s, 1, 3, 1), 40.0);
}

TEST(Distribution, ZeroLatencyIsAllowedAZeroRateIsNot) {
  EXPECT_EQ(drawValue(parse("0", 4, kLatency), 1, 0, 5), 0.0);
  EXPECT_NE(errorOf("0"), "");
}

TEST(Distribution, BadSpecsNameTheOptionAndWhatWasExpected) {
  const auto expectError = [](const std::string& text, const std::string& part) {
    const std::string e = errorOf(text);
    EXPECT_EQ(e.rfind("system.compute_gflops = " + text, 0), 0u) << e;
    EXPECT_NE(e.find(part), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;  // one line
  };
  expectError("constant:-1", "> 0");
  expectError("-3", "> 0");
  expectError("list:", "empty");
  expectError("list:1,-2", "> 0");
  expectError("uniform:5,1", "a <= b");
  expectError("uniform:0,1", "> 0");
  expectError("uniform:1", "a <= b");
  expectError("lognormal:0", "mu,sigma");
  expectError("lognormal:0,-1", "sigma >= 0");
  expectError("gamma:1,2", "unknown distribution 'gamma'");
  expectError("fast", "expected constant:X");
  expectError("constant:nan", "finite");
  expectError("file:", "file:PATH");
  expectError("file:/nonexistent/speeds.csv", "cannot read '/nonexistent/speeds.csv'");
}

TEST(Distribution, BadFileRowsNameTheFileAndLine) {
  const auto errorFor = [](const std::string& contents) {
    TempFile f(contents);
    const std::string e = errorOf("file:" + f.path);
    EXPECT_NE(e.find(f.path), std::string::npos) << e;
    return e;
  };
  EXPECT_NE(errorFor("0,1\n1,2\n2,x\n3,4\n").find("line 3: expected an integer client id and a number"),
            std::string::npos);
  EXPECT_NE(errorFor("0,1\n1;2\n").find("line 2: expected two fields"), std::string::npos);
  EXPECT_NE(errorFor("0,1\n9,2\n").find("line 2: client id must be in [0, 3]"), std::string::npos);
  EXPECT_NE(errorFor("0,1\n1,-2\n").find("line 2: the value must be finite and > 0"), std::string::npos);
  EXPECT_NE(errorFor("0,1\n1,2\n0,3\n").find("line 3: client 0 is given twice (first on line 1)"), std::string::npos);
  EXPECT_NE(errorFor("0,1\n1,2\n3,3\n").find("gives no value for client 2"), std::string::npos);
}
