// The Console's progress line (rank 0's share scaled to every rank's work), its ETA clock, and the
// JSON Lines stream: one whole line per round, NaN as null, numbers that read back exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "app/console.hpp"
#include "app/jsonl_stream.hpp"
#include "support/test_support.hpp"

namespace fedsilo {
namespace {

OutputConfig silentProgress() {
  OutputConfig o;
  o.progressSeconds = 0;  // never prints: the line is built by hand below
  return o;
}

TEST(ConsoleProgress, OneRankShowsExactCountsAndRate) {
  Console console(true, silentProgress(), 20);
  console.startPhase(3, RoundPhase::Training, {10, 1000}, {10, 1000});
  for (int i = 0; i < 4; ++i) console.clientDone(100);
  EXPECT_EQ(console.progressLine(2.0), "progress: round 3, training: 4/10 clients, 200 samples/s, 0:00:02 so far");
}

TEST(ConsoleProgress, SeveralRanksScaleRankZerosShare) {
  Console console(true, silentProgress(), 20);
  // Rank 0 holds 10 of 40 clients and 1000 of 5000 samples; it has done 5 clients, 600 samples in 3 s.
  console.startPhase(7, RoundPhase::Evaluating, {10, 1000}, {40, 5000});
  for (int i = 0; i < 5; ++i) console.clientDone(120);
  EXPECT_EQ(console.progressLine(3.0),
            "progress: round 7, evaluating: ~20/40 clients (rank 0: 5/10), ~1000 samples/s, 0:00:03 so far");
}

TEST(ConsoleProgress, TheFinalEvaluationIsNamedAsSuch) {
  Console console(true, silentProgress(), 5);
  console.startPhase(5, RoundPhase::Evaluating, {2, 10}, {2, 10});
  console.clientDone(5);
  EXPECT_EQ(console.progressLine(1.0).rfind("progress: final evaluation: 1/2 clients", 0), 0u)
      << console.progressLine(1.0);
}

TEST(ConsoleClock, HoursMinutesSeconds) {
  EXPECT_EQ(clockTime(0), "0:00:00");
  EXPECT_EQ(clockTime(59.6), "0:01:00");
  EXPECT_EQ(clockTime(3 * 3600 + 25 * 60 + 7), "3:25:07");
  EXPECT_EQ(clockTime(std::nan("")), "-");
}

TEST(Eta, MeanRoundTimeTimesTheRoundsLeft) {
  EXPECT_DOUBLE_EQ(etaSeconds({2.0, 4.0}, 10), 3.0 * 8);
  EXPECT_DOUBLE_EQ(etaSeconds({2.0, 4.0, 6.0}, 3), 0.0);
  EXPECT_TRUE(std::isnan(etaSeconds({}, 3)));
}

TEST(RoundJson, OneLineWithNullForNaNAndExactNumbers) {
  RoundSummary s;
  s.round = 4;
  s.evaluated = false;
  s.globalAccuracy = s.globalLoss = s.meanClientAccuracy = s.worst10 = std::nan("");
  s.participants = 7;
  s.seconds = 0.1 + 0.2;  // 0.30000000000000004: needs 17 digits
  s.trainSeconds = 0.25;
  EXPECT_EQ(roundJson(s, 12.5),
            "{\"round\": 4, \"evaluated\": false, \"global_accuracy\": null, \"global_loss\": null, "
            "\"client_accuracy_mean\": null, \"client_accuracy_worst10\": null, \"participants\": 7, "
            "\"seconds\": 0.30000000000000004, \"train_seconds\": 0.25, \"eta_seconds\": 12.5}\n");
  s.evaluated = true;
  s.globalAccuracy = 0.8125;
  const std::string line = roundJson(s, std::nan(""));
  EXPECT_NE(line.find("\"evaluated\": true, \"global_accuracy\": 0.8125,"), std::string::npos) << line;
  EXPECT_NE(line.find("\"eta_seconds\": null}"), std::string::npos) << line;
  EXPECT_EQ(std::strtod("0.30000000000000004", nullptr), 0.1 + 0.2);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(JsonlStream, RestartReplacesTheFileAndAppendAddsWholeLines) {
  const std::string path = test::tempDir("jsonl") + "/r.h5.jsonl";
  std::ofstream(path) << "{\"round\": 0}\n{\"round\": 1}\n{\"round\": 2, \"trunc";  // a run killed mid-line
  JsonlStream stream(path);
  stream.restart("{\"round\": 0}\n");  // what a resumed run keeps
  stream.append("{\"round\": 1}\n");
  EXPECT_EQ(slurp(path), "{\"round\": 0}\n{\"round\": 1}\n");
  stream.restart("");
  EXPECT_EQ(slurp(path), "");
  std::ifstream tmp(path + ".tmp");
  EXPECT_FALSE(tmp.good()) << "the temporary file was left";
}

TEST(JsonlStream, AFolderThatCannotBeWrittenIsAnErrorNamingTheFile) {
  JsonlStream stream("/nonexistent-folder/r.h5.jsonl");
  try {
    stream.restart("");
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-folder/r.h5.jsonl"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fedsilo
