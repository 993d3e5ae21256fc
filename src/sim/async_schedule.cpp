#include "sim/async_schedule.hpp"

#include <cmath>
#include <deque>

#include "core/error.hpp"
#include "sim/event_queue.hpp"

namespace fedsilo {

int AsyncSchedule::staleness(int job) const {
  const AsyncJob& j = jobs.at(static_cast<std::size_t>(job));
  FEDSILO_ASSERT(j.version >= 1, "staleness of job ", job, ", which enters no version");
  return j.version - 1 - j.startVersion;
}

namespace {

class Scheduler {
 public:
  Scheduler(const AsyncPolicy& p, const std::function<double(int, int)>& seconds)
      : p_(p), seconds_(seconds), jobsOf_(static_cast<std::size_t>(p.clients), 0) {
    concurrency_ = p.concurrency <= 0 || p.concurrency > p.clients ? p.clients : p.concurrency;
    for (int k = 0; k < p.clients; ++k) idle_.push_back(k);
  }

  AsyncSchedule run() {
    dispatchIdle(0.0);
    while (static_cast<int>(out_.versions.size()) < p_.versions) {
      FEDSILO_ASSERT(!events_.empty(), "asynchronous schedule: no job in flight");
      const double now = events_.top().time;
      while (!events_.empty() && events_.top().time == now && static_cast<int>(out_.versions.size()) < p_.versions)
        arrive(events_.pop().payload, now);
      dispatchIdle(now);
    }
    return std::move(out_);
  }

 private:
  void dispatchIdle(double now) {
    while (inFlight_ < concurrency_ && !idle_.empty()) {
      const int k = idle_.front();
      idle_.pop_front();
      AsyncJob job;
      job.client = k;
      job.index = jobsOf_[static_cast<std::size_t>(k)]++;
      job.startVersion = static_cast<int>(out_.versions.size());
      job.start = now;
      const double d = seconds_(k, job.index);
      FEDSILO_ASSERT(std::isfinite(d) && d >= 0.0, "job of client ", k, " lasts ", d, " s");
      job.arrival = now + d;
      events_.push(job.arrival, k, static_cast<int>(out_.jobs.size()));
      out_.jobs.push_back(job);
      ++inFlight_;
    }
  }

  void arrive(int job, double now) {
    --inFlight_;
    buffer_.push_back(job);
    idle_.push_back(out_.jobs[static_cast<std::size_t>(job)].client);
    if (static_cast<int>(buffer_.size()) < p_.bufferSize) return;
    const int version = static_cast<int>(out_.versions.size()) + 1;
    for (int j : buffer_) out_.jobs[static_cast<std::size_t>(j)].version = version;
    out_.versions.push_back(AsyncVersion{now, std::move(buffer_)});
    buffer_.clear();
  }

  const AsyncPolicy& p_;
  const std::function<double(int, int)>& seconds_;
  int concurrency_ = 0, inFlight_ = 0;
  std::vector<int> jobsOf_;
  std::deque<int> idle_;
  std::vector<int> buffer_;
  EventQueue<int> events_;
  AsyncSchedule out_;
};

}  // namespace

AsyncSchedule buildAsyncSchedule(const AsyncPolicy& policy, const std::function<double(int, int)>& seconds) {
  if (policy.clients < 1) throw ConfigError(fmt("asynchronous schedule: ", policy.clients, " clients, expected >= 1"));
  if (policy.bufferSize < 1 || policy.bufferSize > policy.clients)
    throw ConfigError(
        fmt("buffer size ", policy.bufferSize, ": expected 1 to the number of clients (", policy.clients, ")"));
  if (policy.versions < 0) throw ConfigError(fmt("asynchronous schedule: ", policy.versions, " versions"));
  return Scheduler(policy, seconds).run();
}

std::vector<char> evaluatedVersions(const AsyncSchedule& schedule, int every, double everySeconds) {
  const std::size_t n = schedule.versions.size();
  std::vector<char> due(n, 0);
  double before = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double now = schedule.versions[i].time;
    if (everySeconds > 0.0)
      due[i] = std::floor(now / everySeconds) > std::floor(before / everySeconds);
    else
      due[i] = every > 0 && i % static_cast<std::size_t>(every) == 0;
    before = now;
  }
  if (n > 0) due[n - 1] = 1;
  return due;
}

}  // namespace fedsilo
