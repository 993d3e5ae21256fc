// FedCompass's whole schedule on the simulated clock (docs/async.md, "FedCompass scheduler"): every
// duration is a function of the configuration and of the local steps the scheduler assigns, so the
// schedule (which silo trains how many steps from which version, and which updates make each version)
// is computed before training, the same on every rank; a driver only executes it. No MPI here. Its jobs
// and versions are the asynchronous schedule's (sim/async_schedule.hpp) with their FedCompass fields
// (local steps, arrival group) filled in.
#pragma once
#include <functional>

#include "sim/async_schedule.hpp"
#include "sim/compass_scheduler.hpp"

namespace fedsilo {

// Plays the scheduler until `versions` versions are made: every silo dispatched at time 0 (in id
// order); then, one simulated instant at a time, the arrivals at that time in client-id order and the
// group deadlines that fall on it (after the arrivals: an arrival at a deadline is on time), and only
// then the silos those decisions sent back, in the order they were decided, each from the newest
// version (so equal silos start every job from one version, as in synchronous rounds).
// `seconds(client, index, localSteps)`: the duration of the job (download + compute + upload), finite
// and >= 0 (an assertion otherwise). A job's version is -1 when it is still in flight at the end or is a
// late update replaced by a newer one of the same silo.
AsyncSchedule buildCompassSchedule(int clients, int versions, const CompassOptions& options,
                                   const std::function<double(int, int, int)>& seconds);

}  // namespace fedsilo
