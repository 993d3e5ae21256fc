// The schedule of asynchronous aggregation on the simulated clock (docs/async.md): which silo starts
// which job from which model version, when each update arrives, and which arrivals make each server
// step. Every duration is a function of the configuration, so the whole schedule is computed before
// training, the same on every rank (no MPI here); the driver (fl/async_driver.hpp) only executes it.
//
// The rules:
//   - a silo repeats: download the newest version, train, upload; at most `concurrency` silos have a
//     job in flight, the others wait in a first-in first-out queue (initially in client-id order);
//   - arrivals are handled in (time, client id) order (sim/event_queue.hpp); each enters the buffer,
//     and when the buffer holds `bufferSize` updates the server makes the next version from them;
//   - the events of one simulated instant are handled together: every arrival at that time first,
//     then the idle silos are dispatched, each from the newest version (so equal silos with a buffer
//     of every silo step like synchronous rounds).
#pragma once
#include <functional>
#include <vector>

namespace fedsilo {

// One job: a silo's download, local training and upload.
struct AsyncJob {
  int client = 0;
  int index = 0;         // the client's n-th job (from 0): keys its random streams and compute jitter
  int startVersion = 0;  // the version it downloads and trains from
  double start = 0.0;    // simulated seconds: dispatch
  double arrival = 0.0;  // simulated seconds: its update is at the server
  int version = -1;      // the version its update enters (1, 2, ...), -1: still in flight at the end (FedCompass:
                         // or a late update replaced by a newer one of the same silo)
  int localSteps = 0;    // FedCompass: the local steps the scheduler assigned; 0: train.epochs epochs
  int group = -1;        // FedCompass: its arrival group (-1: none, as every job of the other schedules)
};

// One server step: the version it makes (its position + 1), when, and from which jobs (arrival order).
struct AsyncVersion {
  double time = 0.0;
  std::vector<int> jobs;  // indices into AsyncSchedule::jobs (FedCompass: ascending client id)
  int group = -1;         // FedCompass: the arrival group aggregated (-1: a silo's first update alone)
};

struct AsyncPolicy {
  int clients = 1;
  int concurrency = 0;  // silos training at once; 0 or >= clients: every silo
  int bufferSize = 1;   // updates per server step
  int versions = 1;     // server steps to schedule
};

struct AsyncSchedule {
  std::vector<AsyncJob> jobs;          // in dispatch order
  std::vector<AsyncVersion> versions;  // versions[v - 1] makes version v
  // current version - the version the job trained on, when it enters the server step (>= 0).
  int staleness(int job) const;
};

// `seconds(client, index)`: the duration of the client's index-th job (download + compute + upload).
// Throws ConfigError for a policy out of range; a non-finite or negative duration is an assertion.
AsyncSchedule buildAsyncSchedule(const AsyncPolicy& policy, const std::function<double(int, int)>& seconds);

// Which versions are evaluated (one flag per version, in order): every `every`-th from the first
// (version index % every == 0, as eval.every counts rounds), or with everySeconds > 0 the first version
// whose time passes each multiple of everySeconds; always the last.
std::vector<char> evaluatedVersions(const AsyncSchedule& schedule, int every, double everySeconds);

}  // namespace fedsilo
