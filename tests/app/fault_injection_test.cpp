// FEDSILO_FAULT's pieces without MPI: the plan parser, the hooks (FaultInjection) and the io fault's
// sink decorator (FaultySink). The end-to-end behaviour is tests/integration/test_failures.sh's.
#include <gtest/gtest.h>

#include <cmath>

#include "app/fault_injection.hpp"
#include "core/error.hpp"
#include "support/null_sink.hpp"

namespace fedsilo {
namespace {

DataConfig dataWithFile(const std::string& file) {
  DataConfig d;
  d.dir = "/data/here";
  d.file = file;
  return d;
}

TEST(FaultPlan, ParsesEachKindAndRejectsMalformedValues) {
  EXPECT_EQ(parseFaultPlan("").kind, FaultPlan::Kind::None);
  const FaultPlan nan = parseFaultPlan("nan:rank=1,round=3");
  EXPECT_EQ(nan.kind, FaultPlan::Kind::Nan);
  EXPECT_EQ(nan.rank, 1);
  EXPECT_EQ(nan.round, 3);
  EXPECT_EQ(parseFaultPlan("slow:rank=0,ms=300").ms, 300);
  const FaultPlan stall = parseFaultPlan("stall:rank=1,round=-1");
  EXPECT_EQ(stall.kind, FaultPlan::Kind::Stall);
  EXPECT_EQ(stall.round, -1);
  EXPECT_EQ(stall.watchdogPatience(std::chrono::seconds(10)), std::chrono::seconds(10));  // the run's own
  EXPECT_EQ(parseFaultPlan("stall:rank=0,round=1,patience=3").watchdogPatience(std::chrono::seconds(10)),
            std::chrono::seconds(3));
  EXPECT_THROW(parseFaultPlan("stall:rank=0,patience=0"), ConfigError);
  EXPECT_THROW(parseFaultPlan("stall:rank=0,patience=2s"), ConfigError);
  EXPECT_EQ(stall.unagreedReportDelay(std::chrono::milliseconds(3000)), std::chrono::milliseconds(3000));
  EXPECT_EQ(parseFaultPlan("io:rank=1,round=1,report_delay_ms=0").unagreedReportDelay(std::chrono::milliseconds(3000)),
            std::chrono::milliseconds(0));
  EXPECT_THROW(parseFaultPlan("io:rank=1,report_delay_ms=-1"), ConfigError);
  EXPECT_THROW(parseFaultPlan("melt:rank=0"), ConfigError);
  EXPECT_THROW(parseFaultPlan("io:round=2"), ConfigError);  // no rank
  EXPECT_THROW(parseFaultPlan("io:rank=0,when=2"), ConfigError);
}

TEST(FaultInjection, WithoutAFaultForThisRankEveryHookReturnsTheConfiguredValues) {
  TrainConfig train;
  train.lr = 0.25;
  for (const char* plan : {"", "nan:rank=1,round=0", "data:rank=1", "io:rank=0,round=0"}) {
    SCOPED_TRACE(plan);
    const FaultInjection hooks(parseFaultPlan(plan), 0);
    const DataConfig d = hooks.dataToLoad(dataWithFile("x.csv"));
    EXPECT_EQ(d.dir, "/data/here");
    EXPECT_EQ(d.file, "x.csv");
    for (int round : {0, 1, 5}) EXPECT_EQ(hooks.training(round, train).lr, 0.25);
  }
}

TEST(FaultInjection, DataFaultPointsTheLoaderAtAMissingDirectory) {
  const FaultInjection hooks(parseFaultPlan("data:rank=2"), 2);
  EXPECT_EQ(hooks.dataToLoad(dataWithFile("")).dir, "/nonexistent/fedsilo-fault-injection");
  EXPECT_EQ(hooks.dataToLoad(dataWithFile("")).file, "");
  EXPECT_EQ(hooks.dataToLoad(dataWithFile("x.csv")).file, "/nonexistent/fedsilo-fault-injection/data");
}

TEST(FaultInjection, NanAndInfFaultsChangeTheLearningRateFromTheirRoundOn) {
  TrainConfig train;
  train.lr = 0.05;
  train.batch = 7;
  const FaultInjection nan(parseFaultPlan("nan:rank=1,round=2"), 1);
  EXPECT_EQ(nan.training(0, train).lr, 0.05);
  EXPECT_EQ(nan.training(1, train).lr, 0.05);
  EXPECT_EQ(nan.training(2, train).lr, 1e30);
  EXPECT_EQ(nan.training(9, train).lr, 1e30);
  EXPECT_EQ(nan.training(9, train).batch, 7);  // only the learning rate
  const FaultInjection inf(parseFaultPlan("inf:rank=1,round=0"), 1);
  EXPECT_TRUE(std::isinf(inf.training(0, train).lr));
}

// Appends one round's rows as the round driver does.
void appendRound(RecordSink& sink, int round) {
  sink.appendRoundInt("round", round);
  sink.appendRoundScalar("global_accuracy", 0.5);
  sink.appendRoundClients("client_accuracy", {0.25, 0.75});
  sink.endRound();
}

// The rows of `rounds` rounds reach the file through a FaultySink of `plan` on rank 0.
std::size_t rowsThroughRankZero(const std::string& plan, int rounds) {
  test::MemorySink file;
  FaultySink sink(file, parseFaultPlan(plan), 0);
  for (int round = 0; round < rounds; ++round) appendRound(sink, round);
  return file.rows["client_accuracy"].size();
}

TEST(FaultySink, ForwardsEverythingUntilItsRoundThenFailsTheClientRowOnItsRankOnly) {
  test::MemorySink out;
  FaultySink sink(out, parseFaultPlan("io:rank=1,round=2"), 1);
  appendRound(sink, 0);
  appendRound(sink, 1);
  EXPECT_EQ(out.rows["client_accuracy"].size(), 2u);
  EXPECT_EQ(out.scalars["round"], (std::vector<double>{0, 1}));
  sink.appendRoundInt("round", 2);
  try {
    sink.appendRoundClients("client_accuracy", {0.25, 0.75});
    FAIL() << "expected the injected write error";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "HDF5: write /rounds/client_accuracy failed (injected on rank 1 in round 2 by FEDSILO_FAULT)");
  }
  EXPECT_EQ(out.rows["client_accuracy"].size(), 2u);  // the failed row never reached the file
  sink.writeScalar("/summary/mean", 0.5);              // whole datasets pass
  EXPECT_EQ(out.values["/summary/mean"], std::vector<double>{0.5});
  EXPECT_EQ(rowsThroughRankZero("io:rank=1,round=0", 3), 3u);
}

// The stall fault blocks for good, so only where it does not act can it be run here: on other ranks,
// and on its rank in the rounds before and after its own (the run never gets past it).
TEST(FaultySink, StallForwardsEverythingOutsideItsRankAndRound) {
  test::MemorySink out;
  FaultySink sink(out, parseFaultPlan("stall:rank=1,round=1"), 1);
  appendRound(sink, 0);
  appendRound(sink, 2);
  EXPECT_EQ(out.rows["client_accuracy"].size(), 2u);
  EXPECT_EQ(rowsThroughRankZero("stall:rank=1,round=0", 3), 3u);
  const FaultInjection hooks(parseFaultPlan("stall:rank=1,round=-1"), 0);
  hooks.whileCreatingResults();  // rank 0: returns
}

}  // namespace
}  // namespace fedsilo
