// FedCompass's scheduler on hand-made speed profiles: a small event loop plays the silos (each takes
// its true seconds per step x the steps it was given) and fires group deadlines as a driver would.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "sim/compass_scheduler.hpp"
#include "sim/event_queue.hpp"
#include "support/memory_archive.hpp"

using namespace fedsilo;
using Kind = CompassDecision::Kind;

namespace {

// What the server did at one moment: the decision and the jobs it then sent.
struct Step {
  double time = 0;
  CompassDecision decision;
  std::vector<CompassAssignment> sent;
};

// True seconds per local step of (client, how many jobs it finished before this one).
using Profile = std::function<double(int client, int job)>;

class Federation {
 public:
  Federation(int k, CompassOptions o, Profile profile) : sched_(k, o), profile_(std::move(profile)), jobs_(k, 0) {}

  void start() {
    for (int c = 0; c < sched_.numClients(); ++c) send(c, 0.0, nullptr);
  }

  // Plays events until `aggregations` Single/Group decisions were made.
  std::vector<Step> run(int aggregations) {
    std::vector<Step> trace;
    int done = 0;
    while (done < aggregations) {
      const auto deadline = sched_.nextDeadline();
      Step s;
      if (deadline && (queue_.empty() || deadline->time < queue_.top().time)) {
        s.time = deadline->time;
        s.decision = sched_.expire(deadline->group, s.time);
      } else {
        EXPECT_FALSE(queue_.empty());
        if (queue_.empty()) break;
        const auto e = queue_.pop();
        s.time = e.time;
        s.decision = sched_.arrive(e.client, e.time, e.payload);
      }
      for (int c : s.decision.redispatch) send(c, s.time, &s);
      if (s.decision.kind == Kind::Single || s.decision.kind == Kind::Group) ++done;
      trace.push_back(s);
    }
    return trace;
  }

  CompassScheduler& scheduler() { return sched_; }

 private:
  void send(int c, double now, Step* s) {
    const CompassAssignment a = sched_.dispatch(c, now);
    EXPECT_EQ(a.client, c);
    queue_.push(now + a.localSteps * profile_(c, jobs_[c]++), c, a.localSteps);
    if (s) s->sent.push_back(a);
  }

  CompassScheduler sched_;
  Profile profile_;
  std::vector<int> jobs_;
  EventQueue<int> queue_;
};

CompassOptions options(int qMin = 20, int qMax = 100, double lambda = 1.2, double momentum = 0.9) {
  CompassOptions o;
  o.qMin = qMin;
  o.qMax = qMax;
  o.lambda = lambda;
  o.speedMomentum = momentum;
  return o;
}

std::vector<Step> groupSteps(const std::vector<Step>& trace) {
  std::vector<Step> out;
  for (const Step& s : trace)
    if (s.decision.kind == Kind::Group) out.push_back(s);
  return out;
}

std::string describe(const std::vector<Step>& trace) {
  std::string out;
  for (const Step& s : trace) {
    out += std::to_string(s.time) + " kind " + std::to_string(static_cast<int>(s.decision.kind)) + " g" +
           std::to_string(s.decision.group) + " members";
    for (int m : s.decision.members) out += " " + std::to_string(m);
    for (const auto& a : s.sent)
      out += " | " + std::to_string(a.client) + ":" + std::to_string(a.localSteps) + "@g" + std::to_string(a.group);
    out += "\n";
  }
  return out;
}

}  // namespace

TEST(CompassScheduler, FirstJobIsQmaxWithoutGroupAndFirstArrivalIsAggregatedAlone) {
  CompassScheduler s(2, options());
  const CompassAssignment a = s.dispatch(0, 0.0);
  EXPECT_EQ(a.localSteps, 100);
  EXPECT_EQ(a.group, -1);
  EXPECT_TRUE(std::isnan(s.speedEstimate(0)));
  const CompassDecision d = s.arrive(0, 50.0, 100);
  EXPECT_EQ(d.kind, Kind::Single);
  EXPECT_EQ(d.members, std::vector<int>({0}));
  EXPECT_EQ(d.redispatch, std::vector<int>({0}));
}

TEST(CompassScheduler, EqualSpeedsFormOneGroupWithQmaxSteps) {
  Federation f(4, options(), [](int, int) { return 1.0; });
  f.start();
  const auto trace = f.run(4 + 5);
  // Round one: each silo's first arrival alone; every silo then joins the group the first one opened.
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(trace[i].decision.kind, Kind::Single) << describe(trace);
    ASSERT_EQ(trace[i].sent.size(), 1u);
    EXPECT_EQ(trace[i].sent[0].localSteps, 100);
    EXPECT_EQ(trace[i].sent[0].group, trace[0].sent[0].group);
  }
  const auto groups = groupSteps(trace);
  ASSERT_EQ(groups.size(), 5u) << describe(trace);
  for (const Step& g : groups) {
    EXPECT_EQ(g.decision.members, std::vector<int>({0, 1, 2, 3})) << describe(trace);
    EXPECT_EQ(g.decision.redispatch, std::vector<int>({0, 1, 2, 3}));
    for (const auto& a : g.sent) {
      EXPECT_EQ(a.localSteps, 100);
      EXPECT_EQ(a.group, g.sent[0].group);
    }
  }
}

TEST(CompassScheduler, TwiceSlowerSiloGetsHalfTheStepsInTheSameGroup) {
  Federation f(3, options(), [](int c, int) { return c == 2 ? 2.0 : 1.0; });
  f.start();
  const auto trace = f.run(8);
  const auto groups = groupSteps(trace);
  ASSERT_GE(groups.size(), 3u) << describe(trace);
  for (std::size_t i = 1; i < groups.size(); ++i) {  // steady state: one group of all three
    const Step& g = groups[i];
    EXPECT_EQ(g.decision.members, std::vector<int>({0, 1, 2})) << describe(trace);
    ASSERT_EQ(g.sent.size(), 3u);
    EXPECT_EQ(g.sent[0].client, 0);  // fastest first
    EXPECT_EQ(g.sent[2].client, 2);
    EXPECT_EQ(g.sent[0].localSteps, 100);
    EXPECT_EQ(g.sent[1].localSteps, 100);
    EXPECT_EQ(g.sent[2].localSteps, 50);
    EXPECT_EQ(g.sent[2].group, g.sent[0].group);
  }
}

TEST(CompassScheduler, SiloTooSlowForQminGetsItsOwnGroupWhichTheFastOnesJoinLater) {
  // 10x slower: reaching the fast silos' group would take 10 steps, under q_min = 20. At t = 1000 the
  // fast group runs from 1000 to 1100 (latest 1120); the slow silo opens its own group aimed at that
  // group's return, 1120 + 100 = 1220: 22 steps of 10 s. The fast silos, back at 1200 after another
  // group of their own, reach it with exactly q_min = 20 steps and join it: the groups merge without
  // the slow silo ever waiting.
  Federation f(3, options(), [](int c, int) { return c == 2 ? 10.0 : 1.0; });
  f.start();
  const auto trace = f.run(25);
  std::vector<CompassAssignment> slowJobs;
  for (const Step& s : trace)
    for (const auto& a : s.sent)
      if (a.client == 2 && a.group >= 0) slowJobs.push_back(a);
  ASSERT_GE(slowJobs.size(), 2u) << describe(trace);
  EXPECT_EQ(slowJobs[0].localSteps, 22) << describe(trace);
  EXPECT_DOUBLE_EQ(slowJobs[0].expectedArrival, 1220.0);
  int merged = 0;
  for (const Step& s : trace) {
    for (const auto& a : s.sent)
      if (a.client != 2 && a.group == slowJobs[0].group) {
        EXPECT_DOUBLE_EQ(s.time, 1200.0);
        EXPECT_EQ(a.localSteps, 20);
        ++merged;
      }
  }
  EXPECT_EQ(merged, 2) << describe(trace);
  // Each group of the slow silo is aggregated at its expected arrival, with the fast ones in it.
  for (std::size_t j = 0; j + 1 < slowJobs.size(); ++j) {
    bool found = false;
    for (const Step& g : groupSteps(trace))
      if (g.decision.group == slowJobs[j].group) {
        EXPECT_DOUBLE_EQ(g.time, slowJobs[j].expectedArrival);
        EXPECT_EQ(g.decision.members, std::vector<int>({0, 1, 2}));
        found = true;
      }
    EXPECT_TRUE(found) << describe(trace);
  }
}

TEST(CompassScheduler, SpeedEstimateIsMomentumAverageOfObservedSecondsPerStep) {
  CompassScheduler s(1, options(20, 100, 1.2, 0.5));
  s.dispatch(0, 0.0);
  s.arrive(0, 150.0, 100);  // 1.5 s per step
  EXPECT_DOUBLE_EQ(s.speedEstimate(0), 1.5);
  const CompassAssignment a = s.dispatch(0, 150.0);
  EXPECT_EQ(a.localSteps, 100);  // the only silo opens its own group with q_max
  EXPECT_DOUBLE_EQ(a.expectedArrival, 150.0 + 150.0);
  EXPECT_DOUBLE_EQ(a.latestArrival, 150.0 + 150.0 * 1.2);
  s.arrive(0, 150.0 + 250.0, 100);  // observed 2.5: 0.5 x 1.5 + 0.5 x 2.5
  EXPECT_DOUBLE_EQ(s.speedEstimate(0), 2.0);
}

TEST(CompassScheduler, StepsAreClampedToQmin) {
  // Silo 1 (1 s per step) opens a group expected at 200, latest 220. Silo 0 (4 s per step: 40 steps in
  // 160 s), dispatched at 160, reaches that group with 10 steps only, so it opens its own, aimed at the
  // group's return: (220 + 1 x 100 - 160) / 4 = 40 steps; with q_min = 50 it gets 50.
  for (const int qMin : {20, 50}) {
    CompassScheduler s(2, options(qMin, 100, 1.2, 1.0));
    s.dispatch(0, 0.0);
    s.dispatch(1, 0.0);
    s.arrive(1, 100.0, 100);
    const CompassAssignment fast = s.dispatch(1, 100.0);
    EXPECT_EQ(fast.localSteps, 100);
    EXPECT_DOUBLE_EQ(fast.expectedArrival, 200.0);
    s.arrive(0, 160.0, 40);
    const CompassAssignment slow = s.dispatch(0, 160.0);
    EXPECT_EQ(slow.localSteps, qMin == 20 ? 40 : 50);
    EXPECT_NE(slow.group, fast.group);
    EXPECT_DOUBLE_EQ(slow.expectedArrival, 160.0 + slow.localSteps * 4.0);
  }
}

TEST(CompassScheduler, StepsAreClampedToQmax) {
  // A silo 10x faster than the group it could join would need 1000 steps to wait for it: it opens its
  // own group with q_max instead.
  CompassScheduler s(2, options(20, 100, 1.2, 1.0));
  s.dispatch(0, 0.0);
  s.dispatch(1, 0.0);
  s.arrive(1, 100.0, 100);  // 1 s per step
  const CompassAssignment slow = s.dispatch(1, 100.0);
  s.arrive(0, 100.0, 1000);  // 0.1 s per step
  const CompassAssignment fast = s.dispatch(0, 100.0);
  EXPECT_NE(fast.group, slow.group);
  EXPECT_EQ(fast.localSteps, 100);
}

TEST(CompassScheduler, EveryAssignmentStaysWithinQminQmaxOnHeterogeneousSilos) {
  const std::vector<double> speed = {0.3, 1.0, 1.7, 2.2, 0.9, 5.0, 12.0, 1.1};
  Federation f(8, options(10, 60, 1.5, 0.9), [&](int c, int job) { return speed[c] * (job % 3 == 2 ? 1.4 : 1.0); });
  f.start();
  const auto trace = f.run(60);
  int groupAggregations = 0;
  for (const Step& s : trace) {
    for (const auto& a : s.sent) {
      EXPECT_GE(a.localSteps, 10);
      EXPECT_LE(a.localSteps, 60);
    }
    if (s.decision.kind == Kind::Group) {
      ++groupAggregations;
      EXPECT_FALSE(s.decision.members.empty());
      EXPECT_TRUE(std::is_sorted(s.decision.members.begin(), s.decision.members.end()));
    }
  }
  EXPECT_GT(groupAggregations, 30);
}

TEST(CompassScheduler, LateSiloIsBufferedAndEntersTheNextGroupAggregation) {
  // All equal until silo 3 becomes 3x slower on its third job: it misses its group's latest arrival.
  Federation f(4, options(), [](int c, int job) { return c == 3 && job == 2 ? 3.0 : 1.0; });
  f.start();
  const auto trace = f.run(12);
  bool expiredWithoutSilo3 = false, buffered = false, mergedLater = false;
  for (const Step& s : trace) {
    const auto& m = s.decision.members;
    if (s.decision.kind == Kind::Group && m == std::vector<int>({0, 1, 2})) expiredWithoutSilo3 = true;
    if (s.decision.kind == Kind::Buffered) {
      EXPECT_TRUE(expiredWithoutSilo3) << describe(trace);
      EXPECT_EQ(s.decision.redispatch, std::vector<int>({3}));
      buffered = true;
    }
    if (buffered && s.decision.kind == Kind::Group && std::find(m.begin(), m.end(), 3) != m.end()) mergedLater = true;
  }
  EXPECT_TRUE(expiredWithoutSilo3) << describe(trace);
  EXPECT_TRUE(buffered) << describe(trace);
  EXPECT_TRUE(mergedLater) << describe(trace);
}

TEST(CompassScheduler, ExpireAtTheLatestArrivalAggregatesWhoArrived) {
  CompassScheduler s(2, options(20, 100, 1.5, 1.0));
  s.dispatch(0, 0.0);
  s.dispatch(1, 0.0);
  s.arrive(0, 100.0, 100);
  s.arrive(1, 100.0, 100);
  const CompassAssignment a0 = s.dispatch(0, 100.0);
  const CompassAssignment a1 = s.dispatch(1, 100.0);
  ASSERT_EQ(a0.group, a1.group);
  EXPECT_EQ(s.arrive(0, 200.0, 100).kind, Kind::Wait);
  const auto deadline = s.nextDeadline();
  ASSERT_TRUE(deadline.has_value());
  EXPECT_EQ(deadline->group, a0.group);
  EXPECT_DOUBLE_EQ(deadline->time, 250.0);
  const CompassDecision d = s.expire(a0.group, 250.0);
  EXPECT_EQ(d.kind, Kind::Group);
  EXPECT_EQ(d.members, std::vector<int>({0}));
  EXPECT_FALSE(s.nextDeadline().has_value());
  const CompassDecision late = s.arrive(1, 260.0, 100);
  EXPECT_EQ(late.kind, Kind::Buffered);
  EXPECT_TRUE(late.members.empty());
}

TEST(CompassScheduler, ASiloLateOnceAndThenOnTimeCountsOnceWithItsNewerUpdate) {
  CompassScheduler s(2, options(20, 100, 1.2, 1.0));
  s.dispatch(0, 0.0);
  s.dispatch(1, 0.0);
  s.arrive(0, 100.0, 100);
  s.dispatch(0, 100.0);  // group 0: expected 200, latest 220
  s.arrive(1, 100.0, 100);
  EXPECT_EQ(s.dispatch(1, 100.0).localSteps, 100);
  EXPECT_EQ(s.arrive(0, 200.0, 100).kind, Kind::Wait);
  const CompassDecision expired = s.expire(0, 220.0);
  EXPECT_EQ(expired.members, std::vector<int>({0}));
  const CompassAssignment next0 = s.dispatch(0, 220.0);  // group 1: expected 320
  EXPECT_EQ(s.arrive(1, 230.0, 100).kind, Kind::Buffered);
  const CompassAssignment next1 = s.dispatch(1, 230.0);  // 1.3 s per step: (320 - 230) / 1.3 -> 69
  EXPECT_EQ(next1.group, next0.group);
  EXPECT_EQ(next1.localSteps, 69);
  EXPECT_EQ(s.arrive(1, 230.0 + 69 * 1.3, 69).kind, Kind::Wait);
  const CompassDecision d = s.arrive(0, 320.0, 100);
  EXPECT_EQ(d.kind, Kind::Group);
  EXPECT_EQ(d.members, std::vector<int>({0, 1}));
  EXPECT_EQ(d.late, std::vector<int>({1}));
  EXPECT_EQ(d.onTime, std::vector<int>({0, 1}));
}

TEST(CompassScheduler, ArrivalExactlyAtTheLatestArrivalIsOnTime) {
  CompassScheduler s(2, options(20, 100, 1.5, 1.0));
  s.dispatch(0, 0.0);
  s.dispatch(1, 0.0);
  s.arrive(0, 100.0, 100);
  s.arrive(1, 100.0, 100);
  const int group = s.dispatch(0, 100.0).group;
  s.dispatch(1, 100.0);
  EXPECT_EQ(s.arrive(0, 200.0, 100).kind, Kind::Wait);
  const CompassDecision d = s.arrive(1, 250.0, 100);  // latest arrival = 100 + 1.5 x 100
  EXPECT_EQ(d.kind, Kind::Group);
  EXPECT_EQ(d.group, group);
  EXPECT_EQ(d.members, std::vector<int>({0, 1}));
  EXPECT_EQ(d.redispatch, std::vector<int>({0, 1}));  // silo 0 measured faster this time
}

TEST(CompassScheduler, SameEventsGiveTheSameSchedule) {
  const Profile p = [](int c, int job) { return 0.5 + 0.37 * c + 0.1 * (job % 4); };
  Federation a(6, options(5, 50, 1.3, 0.7), p), b(6, options(5, 50, 1.3, 0.7), p);
  a.start();
  b.start();
  EXPECT_EQ(describe(a.run(40)), describe(b.run(40)));
  EXPECT_EQ(a.scheduler().save(), b.scheduler().save());
}

TEST(CompassScheduler, StateRoundTripContinuesIdentically) {
  // Silos in flight, a group waiting and late updates buffered all survive save/load: a federation
  // whose scheduler is rebuilt from the saved state mid-run continues exactly as the original.
  const Profile p = [](int c, int job) { return 1.0 + 0.8 * c + (c == 1 && job % 3 == 1 ? 2.0 : 0.0); };
  Federation a(5, options(10, 80, 1.2, 0.9), p);
  a.start();
  a.run(15);
  const std::vector<double> mid = a.scheduler().save();
  Federation b = a;
  b.scheduler() = CompassScheduler(5, options(10, 80, 1.2, 0.9));
  b.scheduler().load(mid);
  EXPECT_EQ(b.scheduler().save(), mid);
  EXPECT_EQ(describe(a.run(20)), describe(b.run(20)));
  EXPECT_EQ(a.scheduler().save(), b.scheduler().save());
}

TEST(CompassScheduler, CheckpointThroughAnArchiveRestoresTheState) {
  Federation a(4, options(10, 80, 1.2, 0.9), [](int c, int job) { return 1.0 + c + 0.5 * (job % 2); });
  a.start();
  a.run(10);
  test::MemoryArchive ar;
  a.scheduler().checkpoint(ar, "fedcompass/scheduler");
  EXPECT_EQ(ar.names(), std::vector<std::string>({"fedcompass/scheduler"}));
  ar.startLoading();
  CompassScheduler restored(4, options(10, 80, 1.2, 0.9));
  restored.checkpoint(ar, "fedcompass/scheduler");
  EXPECT_EQ(restored.save(), a.scheduler().save());
}

TEST(CompassScheduler, LoadRefusesAStateItDidNotWrite) {
  CompassScheduler s(3, options());
  std::vector<double> state = s.save();
  CompassScheduler other(4, options());
  EXPECT_THROW(other.load(state), RuntimeError);
  std::vector<double> truncated(state.begin(), state.end() - 1);
  EXPECT_THROW(s.load(truncated), RuntimeError);
  std::vector<double> garbage = state;
  garbage[0] = 1.0;
  EXPECT_THROW(s.load(garbage), RuntimeError);
}

TEST(CompassScheduler, BadOptionsAreOneLineConfigErrorsNamingTheOption) {
  auto message = [](CompassOptions o) {
    try {
      validateCompassOptions(o);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message(options(0, 100)), "fedcompass.q_min = 0: expected an integer >= 1");
  EXPECT_EQ(message(options(20, 10)), "fedcompass.q_max = 10: expected an integer >= fedcompass.q_min (20)");
  EXPECT_EQ(message(options(20, 100, 0.9)), "fedcompass.lambda = 0.9: expected a finite number >= 1");
  EXPECT_EQ(message(options(20, 100, 1.2, 0.0)), "fedcompass.speed_momentum = 0: expected a number in (0, 1]");
  EXPECT_EQ(message(options(20, 100, 1.2, 1.5)), "fedcompass.speed_momentum = 1.5: expected a number in (0, 1]");
  EXPECT_EQ(message(options()), "");
}
