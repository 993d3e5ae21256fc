#include "sim/compass_schedule.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "sim/event_queue.hpp"

namespace fedsilo {

namespace {

// The event loop: the scheduler's decisions turned into jobs and versions.
class CompassPlayer {
 public:
  CompassPlayer(int clients, const CompassOptions& options, const std::function<double(int, int, int)>& seconds)
      : scheduler_(clients, options),
        seconds_(seconds),
        jobsDone_(static_cast<std::size_t>(clients), 0),
        waiting_(static_cast<std::size_t>(clients), -1),
        buffered_(static_cast<std::size_t>(clients), -1) {}

  AsyncSchedule play(int versions) {
    for (int c = 0; c < scheduler_.numClients(); ++c) dispatch(c, 0.0);
    while (!done(versions)) {
      const double now = nextEventTime();
      while (!done(versions) && hasEventAt(now)) step();
      for (int c : toDispatch_) dispatch(c, now);
      toDispatch_.clear();
    }
    return std::move(out_);
  }

 private:
  bool done(int versions) const { return static_cast<int>(out_.versions.size()) >= versions; }

  // The time of the next arrival or group deadline, whichever is first.
  double nextEventTime() const {
    const auto deadline = scheduler_.nextDeadline();
    FEDSILO_ASSERT(deadline || !arrivals_.empty(), "FedCompass schedule: no job in flight and no deadline");
    if (arrivals_.empty()) return deadline->time;
    return deadline ? std::min(deadline->time, arrivals_.top().time) : arrivals_.top().time;
  }

  bool hasEventAt(double now) const {
    const auto deadline = scheduler_.nextDeadline();
    return (deadline && deadline->time <= now) || (!arrivals_.empty() && arrivals_.top().time <= now);
  }

  // The next event: an arrival, or a deadline strictly before the next arrival.
  void step() {
    const auto deadline = scheduler_.nextDeadline();
    if (deadline && (arrivals_.empty() || deadline->time < arrivals_.top().time)) {
      apply(scheduler_.expire(deadline->group, deadline->time), deadline->time);
      return;
    }
    const auto e = arrivals_.pop();
    const int job = e.payload;
    const int c = e.client;
    const CompassDecision d = scheduler_.arrive(c, e.time, out_.jobs[static_cast<std::size_t>(job)].localSteps);
    if (d.kind == CompassDecision::Kind::Buffered) {
      buffered_[static_cast<std::size_t>(c)] = job;  // replaces an older late update of this silo
    } else {
      waiting_[static_cast<std::size_t>(c)] = job;
    }
    apply(d, e.time);
  }

  void apply(const CompassDecision& d, double now) {
    if (d.kind == CompassDecision::Kind::Single || d.kind == CompassDecision::Kind::Group) {
      AsyncVersion v;
      v.time = now;
      v.group = d.kind == CompassDecision::Kind::Group ? d.group : -1;
      const int version = static_cast<int>(out_.versions.size()) + 1;
      for (int m : d.late) enter(buffered_[static_cast<std::size_t>(m)], version, v);
      for (int m : d.onTime) enter(waiting_[static_cast<std::size_t>(m)], version, v);
      std::sort(v.jobs.begin(), v.jobs.end(), [this](int a, int b) {
        return out_.jobs[static_cast<std::size_t>(a)].client < out_.jobs[static_cast<std::size_t>(b)].client;
      });
      out_.versions.push_back(v);
    }
    toDispatch_.insert(toDispatch_.end(), d.redispatch.begin(), d.redispatch.end());
  }

  // `slot`'s update (if any) enters `version`; a silo's late update is dropped when its on-time one
  // enters the same version (the scheduler's rule: the newer update counts).
  void enter(int& slot, int version, AsyncVersion& v) {
    if (slot < 0) return;
    AsyncJob& job = out_.jobs[static_cast<std::size_t>(slot)];
    for (int& other : v.jobs)
      if (out_.jobs[static_cast<std::size_t>(other)].client == job.client) {
        out_.jobs[static_cast<std::size_t>(other)].version = -1;
        other = slot;
        job.version = version;
        slot = -1;
        return;
      }
    job.version = version;
    v.jobs.push_back(slot);
    slot = -1;
  }

  void dispatch(int c, double now) {
    const CompassAssignment a = scheduler_.dispatch(c, now);
    AsyncJob j;
    j.client = c;
    j.index = jobsDone_[static_cast<std::size_t>(c)]++;
    j.localSteps = a.localSteps;
    j.group = a.group;
    j.startVersion = static_cast<int>(out_.versions.size());
    j.start = now;
    const double s = seconds_(c, j.index, a.localSteps);
    FEDSILO_ASSERT(std::isfinite(s) && s >= 0, "job ", j.index, " of client ", c, " lasts ", s, " s");
    j.arrival = now + s;
    const int index = static_cast<int>(out_.jobs.size());
    out_.jobs.push_back(j);
    arrivals_.push(j.arrival, c, index);
  }

  CompassScheduler scheduler_;
  const std::function<double(int, int, int)>& seconds_;
  std::vector<int> jobsDone_;
  std::vector<int> waiting_;     // each silo's update waiting for its group (or just arrived), -1: none
  std::vector<int> buffered_;    // each silo's late update waiting for a group aggregation, -1: none
  std::vector<int> toDispatch_;  // silos sent back by this instant's decisions, in decision order
  EventQueue<int> arrivals_;     // payload: job index
  AsyncSchedule out_;
};

}  // namespace

AsyncSchedule buildCompassSchedule(int clients, int versions, const CompassOptions& options,
                                   const std::function<double(int, int, int)>& seconds) {
  FEDSILO_ASSERT(versions >= 0, "a FedCompass schedule of ", versions, " versions");
  return CompassPlayer(clients, options, seconds).play(versions);
}

}  // namespace fedsilo
