// The asynchronous schedule on hand-made durations: arrival order by (time, client id), the version each
// job trains from, the buffer, the concurrency limit, the instant's arrivals before its dispatches.
#include <gtest/gtest.h>

#include <vector>

#include "core/error.hpp"
#include "sim/async_schedule.hpp"

using namespace fedsilo;

namespace {

// Client k's every job lasts durations[k] seconds.
AsyncSchedule schedule(const std::vector<double>& durations, int buffer, int versions, int concurrency = 0) {
  const AsyncPolicy p{static_cast<int>(durations.size()), concurrency, buffer, versions};
  return buildAsyncSchedule(p, [&](int k, int) { return durations[static_cast<std::size_t>(k)]; });
}

std::vector<int> clientsOf(const AsyncSchedule& s, int version) {
  std::vector<int> out;
  for (int j : s.versions[static_cast<std::size_t>(version - 1)].jobs)
    out.push_back(s.jobs[static_cast<std::size_t>(j)].client);
  return out;
}

}  // namespace

TEST(AsyncSchedule, FedAsyncOnTwoSpeedsSteppedByHand) {
  // Client 0 takes 1 s, client 1 takes 3 s, one update per version.
  const AsyncSchedule s = schedule({1.0, 3.0}, 1, 5);
  ASSERT_EQ(s.versions.size(), 5u);
  const std::vector<double> times{1, 2, 3, 3, 4};
  const std::vector<std::vector<int>> who{{0}, {0}, {0}, {1}, {0}};
  for (int v = 1; v <= 5; ++v) {
    EXPECT_DOUBLE_EQ(s.versions[static_cast<std::size_t>(v - 1)].time, times[static_cast<std::size_t>(v - 1)]) << v;
    EXPECT_EQ(clientsOf(s, v), who[static_cast<std::size_t>(v - 1)]) << v;
  }
  // At t = 3 client 0 (tie broken by id) makes version 3, then client 1's update from version 0 makes
  // version 4 with staleness 3; both then download version 4.
  const int slow = s.versions[3].jobs[0];
  EXPECT_EQ(s.jobs[static_cast<std::size_t>(slow)].startVersion, 0);
  EXPECT_EQ(s.staleness(slow), 3);
  const int fast = s.versions[4].jobs[0];
  EXPECT_EQ(s.jobs[static_cast<std::size_t>(fast)].startVersion, 4);
  EXPECT_EQ(s.jobs[static_cast<std::size_t>(fast)].index, 3);
  EXPECT_EQ(s.staleness(fast), 0);
}

TEST(AsyncSchedule, TiesAtOneInstantAreHandledInClientOrderBeforeAnyDispatch) {
  const AsyncSchedule s = schedule({2.0, 2.0, 2.0}, 1, 6);
  for (int v = 1; v <= 3; ++v) EXPECT_EQ(clientsOf(s, v), std::vector<int>{v - 1});
  // Every silo downloads version 3, the newest at t = 2, so the next wave's staleness is 0, 1, 2.
  for (int v = 4; v <= 6; ++v) {
    const int j = s.versions[static_cast<std::size_t>(v - 1)].jobs[0];
    EXPECT_EQ(s.jobs[static_cast<std::size_t>(j)].startVersion, 3);
    EXPECT_EQ(s.staleness(j), v - 4);
  }
}

TEST(AsyncSchedule, EqualSilosWithAFullBufferStepLikeSynchronousRounds) {
  const AsyncSchedule s = schedule({1.0, 1.0, 1.0, 1.0}, 4, 3);
  for (int v = 1; v <= 3; ++v) {
    EXPECT_EQ(clientsOf(s, v), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_DOUBLE_EQ(s.versions[static_cast<std::size_t>(v - 1)].time, v);
    for (int j : s.versions[static_cast<std::size_t>(v - 1)].jobs) {
      EXPECT_EQ(s.jobs[static_cast<std::size_t>(j)].startVersion, v - 1);
      EXPECT_EQ(s.jobs[static_cast<std::size_t>(j)].index, v - 1);
    }
  }
}

TEST(AsyncSchedule, BufferTakesTheFirstArrivalsAndAFastSiloMayFillItTwice) {
  // Buffer 2: client 0 (1 s) arrives at 1 and 2 before client 1 (5 s): version 1 is client 0 twice.
  const AsyncSchedule s = schedule({1.0, 5.0}, 2, 3);
  EXPECT_EQ(clientsOf(s, 1), (std::vector<int>{0, 0}));
  EXPECT_DOUBLE_EQ(s.versions[0].time, 2.0);
  EXPECT_EQ(clientsOf(s, 2), (std::vector<int>{0, 0}));
  EXPECT_DOUBLE_EQ(s.versions[1].time, 4.0);
  // t = 5: client 1 (from version 0, staleness 2) then client 0 (from version 2) fill version 3.
  EXPECT_EQ(clientsOf(s, 3), (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(s.versions[2].time, 5.0);
  EXPECT_EQ(s.staleness(s.versions[2].jobs[1]), 2);
}

TEST(AsyncSchedule, ConcurrencyLimitDispatchesWaitingSilosFirstInFirstOut) {
  // Two of three silos at once: 0 and 1 start; when 0 arrives, 2 (waiting longest) starts, not 0.
  const AsyncSchedule s = schedule({1.0, 1.5, 1.0}, 1, 4, 2);
  EXPECT_EQ(s.jobs[0].client, 0);
  EXPECT_EQ(s.jobs[1].client, 1);
  ASSERT_GE(s.jobs.size(), 3u);
  EXPECT_EQ(s.jobs[2].client, 2);
  EXPECT_DOUBLE_EQ(s.jobs[2].start, 1.0);
  EXPECT_EQ(s.jobs[2].startVersion, 1);
  int inFlightMax = 0;
  for (double t : {0.0, 0.5, 1.0, 1.25, 1.75, 2.25}) {
    int n = 0;
    for (const AsyncJob& j : s.jobs) n += j.start <= t && t < j.arrival;
    inFlightMax = std::max(inFlightMax, n);
  }
  EXPECT_EQ(inFlightMax, 2);
  EXPECT_EQ(clientsOf(s, 1), std::vector<int>{0});
  EXPECT_EQ(clientsOf(s, 2), std::vector<int>{1});  // t = 1.5
  EXPECT_EQ(clientsOf(s, 3), std::vector<int>{2});  // t = 2
}

TEST(AsyncSchedule, JobIndicesCountEachClientsJobs) {
  const AsyncSchedule s = schedule({1.0, 2.0}, 1, 6);
  std::vector<int> seen(2, 0);
  for (const AsyncJob& j : s.jobs) EXPECT_EQ(j.index, seen[static_cast<std::size_t>(j.client)]++);
}

TEST(AsyncSchedule, BadPoliciesAreConfigErrors) {
  EXPECT_THROW(schedule({1.0, 1.0}, 3, 2), ConfigError);
  EXPECT_THROW(schedule({1.0, 1.0}, 0, 2), ConfigError);
}

TEST(AsyncSchedule, EvaluatedVersionsByCountOrBySimulatedTime) {
  const AsyncSchedule s = schedule({1.0, 3.0}, 1, 5);  // versions at t = 1, 2, 3, 3, 4
  EXPECT_EQ(evaluatedVersions(s, 2, 0.0), (std::vector<char>{1, 0, 1, 0, 1}));
  EXPECT_EQ(evaluatedVersions(s, 4, 0.0), (std::vector<char>{1, 0, 0, 0, 1}));
  // Every 2 s: the first version at or past t = 2 (version 2) and t = 4 (version 5, also the last).
  EXPECT_EQ(evaluatedVersions(s, 1, 2.0), (std::vector<char>{0, 1, 0, 0, 1}));
}
