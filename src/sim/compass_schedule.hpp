// FedCompass's whole schedule on the simulated clock (docs/async.md, "FedCompass scheduler"): every
// duration is a function of the configuration and of the local steps the scheduler assigns, so the
// schedule (which silo trains how many steps from which version, and which updates make each version)
// is computed before training, the same on every rank; a driver only executes it. No MPI here.
#pragma once
#include <functional>
#include <vector>

#include "sim/compass_scheduler.hpp"

namespace fedsilo {

struct CompassJob {
  int client = 0;
  int index = 0;         // the client's n-th job (from 0)
  int localSteps = 0;    // assigned by the scheduler
  int group = -1;        // its arrival group (-1: the silo's first job)
  int startVersion = 0;  // the version it downloads and trains from
  double start = 0.0;    // simulated seconds: dispatch
  double arrival = 0.0;  // simulated seconds: its update is at the server
  int version = -1;      // the version its update enters (1, 2, ...); -1: in flight at the end, or a
                         // late update replaced by a newer one of the same silo
};

struct CompassVersion {
  double time = 0.0;
  int group = -1;         // the arrival group aggregated; -1: a silo's first update alone
  std::vector<int> jobs;  // indices into CompassSchedule::jobs, ascending client id
};

struct CompassSchedule {
  std::vector<CompassJob> jobs;          // in dispatch order
  std::vector<CompassVersion> versions;  // versions[v - 1] makes version v
  // The version a job's update entered minus the version it trained on (>= 0).
  int staleness(int job) const;
};

// Plays the scheduler until `versions` versions are made: every silo dispatched at time 0 (in id
// order), then arrivals in (time, client id) order, a group's deadline after the arrivals at its time.
// `seconds(client, index, localSteps)`: the duration of the job (download + compute + upload), finite
// and >= 0 (an assertion otherwise).
CompassSchedule buildCompassSchedule(int clients, int versions, const CompassOptions& options,
                                     const std::function<double(int, int, int)>& seconds);

}  // namespace fedsilo
