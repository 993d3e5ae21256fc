// FedCompass's precomputed schedule: versions, start versions and staleness on hand-made durations.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "sim/compass_schedule.hpp"

using namespace fedsilo;

namespace {

CompassOptions options() {
  CompassOptions o;  // q_min 20, q_max 100, lambda 1.2, momentum 0.9
  return o;
}

// Seconds per step of each silo; a job lasts steps x that.
std::function<double(int, int, int)> perStep(std::vector<double> speed) {
  return [speed](int c, int, int steps) { return steps * speed[static_cast<std::size_t>(c)]; };
}

std::vector<int> clientsOf(const AsyncSchedule& s, const AsyncVersion& v) {
  std::vector<int> out;
  for (int j : v.jobs) out.push_back(s.jobs[static_cast<std::size_t>(j)].client);
  return out;
}

}  // namespace

TEST(CompassSchedule, EqualSilosMakeOneSingleVersionEachThenWholeGroups) {
  const AsyncSchedule s = buildCompassSchedule(3, 6, options(), perStep({1.0, 1.0, 1.0}));
  ASSERT_EQ(s.versions.size(), 6u);
  for (int v = 0; v < 3; ++v) {  // first arrivals: one version each, at t = 100, in id order
    EXPECT_EQ(s.versions[v].group, -1);
    EXPECT_EQ(clientsOf(s, s.versions[v]), std::vector<int>({v}));
    EXPECT_DOUBLE_EQ(s.versions[v].time, 100.0);
  }
  for (int v = 3; v < 6; ++v) {
    EXPECT_GE(s.versions[v].group, 0);
    EXPECT_EQ(clientsOf(s, s.versions[v]), std::vector<int>({0, 1, 2}));
    EXPECT_DOUBLE_EQ(s.versions[v].time, 100.0 * (v - 1));
  }
  // The arrivals of one instant are handled before the silos are sent back: every second job starts
  // from version 3 (all first updates in), and every group version is a whole round without staleness.
  for (int v = 3; v < 6; ++v)
    for (int job : s.versions[v].jobs) {
      EXPECT_EQ(s.jobs[static_cast<std::size_t>(job)].startVersion, v) << "version " << v + 1;
      EXPECT_EQ(s.staleness(job), 0);
    }
  for (int v = 0; v < 3; ++v) EXPECT_EQ(s.staleness(s.versions[v].jobs[0]), v);  // the singles from version 0
}

TEST(CompassSchedule, JobsRecordTheAssignedStepsAndTheirDurations) {
  const AsyncSchedule s = buildCompassSchedule(3, 8, options(), perStep({1.0, 1.0, 2.0}));
  bool sawHalf = false;
  for (const AsyncJob& j : s.jobs) {
    EXPECT_DOUBLE_EQ(j.arrival - j.start, j.localSteps * (j.client == 2 ? 2.0 : 1.0));
    EXPECT_GE(j.localSteps, 20);
    EXPECT_LE(j.localSteps, 100);
    if (j.client == 2 && j.group >= 0) {
      EXPECT_EQ(j.localSteps, 50);
      sawHalf = true;
    }
  }
  EXPECT_TRUE(sawHalf);
  for (std::size_t v = 1; v < s.versions.size(); ++v) EXPECT_GE(s.versions[v].time, s.versions[v - 1].time);
}

TEST(CompassSchedule, ALateUpdateEntersALaterVersionWithItsStaleness) {
  // Silo 3 is 3x slower on its third job (index 2) and misses its group's latest arrival.
  const auto seconds = [](int c, int index, int steps) { return steps * (c == 3 && index == 2 ? 3.0 : 1.0); };
  const AsyncSchedule s = buildCompassSchedule(4, 12, options(), seconds);
  int lateJob = -1;
  for (std::size_t j = 0; j < s.jobs.size(); ++j)
    if (s.jobs[j].client == 3 && s.jobs[j].index == 2) lateJob = static_cast<int>(j);
  ASSERT_GE(lateJob, 0);
  const AsyncJob& late = s.jobs[static_cast<std::size_t>(lateJob)];
  ASSERT_GT(late.version, 0);
  const AsyncVersion& entered = s.versions[static_cast<std::size_t>(late.version - 1)];
  EXPECT_GT(entered.time, late.arrival);  // it waited in the buffer for a later group aggregation
  EXPECT_GE(s.staleness(lateJob), 1);
  // The version its group made without it came first.
  bool groupWithoutIt = false;
  for (const AsyncVersion& v : s.versions)
    if (v.group == late.group) {
      EXPECT_EQ(clientsOf(s, v), std::vector<int>({0, 1, 2}));
      groupWithoutIt = true;
    }
  EXPECT_TRUE(groupWithoutIt);
}

TEST(CompassSchedule, EveryJobEntersAtMostOneVersionAndVersionsListEachSiloOnce) {
  const auto seconds = [](int c, int index, int steps) {
    return steps * (0.4 + 0.9 * c) * (index % 3 == 1 ? 1.6 : 1.0);
  };
  const AsyncSchedule s = buildCompassSchedule(6, 80, options(), seconds);
  std::vector<int> entered(s.jobs.size(), 0);
  for (std::size_t v = 0; v < s.versions.size(); ++v) {
    const auto clients = clientsOf(s, s.versions[v]);
    EXPECT_TRUE(std::is_sorted(clients.begin(), clients.end()));
    EXPECT_EQ(std::adjacent_find(clients.begin(), clients.end()), clients.end());
    for (int j : s.versions[v].jobs) {
      ++entered[static_cast<std::size_t>(j)];
      EXPECT_EQ(s.jobs[static_cast<std::size_t>(j)].version, static_cast<int>(v) + 1);
      EXPECT_LE(s.jobs[static_cast<std::size_t>(j)].arrival, s.versions[v].time);
      EXPECT_GE(s.staleness(j), 0);
    }
  }
  for (int n : entered) EXPECT_LE(n, 1);
}

TEST(CompassSchedule, IsAFunctionOfItsInputs) {
  const auto seconds = [](int c, int index, int steps) { return steps * (1.0 + 0.3 * c + 0.2 * (index % 2)); };
  const AsyncSchedule a = buildCompassSchedule(5, 30, options(), seconds);
  const AsyncSchedule b = buildCompassSchedule(5, 30, options(), seconds);
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (std::size_t j = 0; j < a.jobs.size(); ++j) {
    EXPECT_EQ(a.jobs[j].client, b.jobs[j].client);
    EXPECT_EQ(a.jobs[j].localSteps, b.jobs[j].localSteps);
    EXPECT_EQ(a.jobs[j].version, b.jobs[j].version);
    EXPECT_EQ(a.jobs[j].arrival, b.jobs[j].arrival);
  }
}
