// FedCompass's computing-power-aware scheduler (Li et al., ICLR 2024, arXiv 2309.14675; docs/async.md,
// "FedCompass scheduler"). It keeps an estimate of each silo's seconds per local step, gives every
// dispatched silo a number of local steps in [q_min, q_max] chosen so that the silos of one arrival
// group reach the server together, and tells the driver when a group is complete (or its latest-arrival
// time has passed) so that the server aggregates that group at once.
//
// Pure bookkeeping on the simulated clock: no MPI, no model. The driver feeds it events in simulated-time
// order, ties by client id (sim/event_queue.hpp), so every rank that replays the same events holds the
// same state. The whole state is a flat vector of doubles for checkpoints.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace fedsilo {

class StateArchive;

struct CompassOptions {
  int qMin = 20;               // fedcompass.q_min: fewest local steps a silo is given
  int qMax = 100;              // fedcompass.q_max: most local steps (also the first assignment)
  double lambda = 1.2;         // fedcompass.lambda: latest arrival = dispatch + lambda x expected duration
  double speedMomentum = 0.9;  // fedcompass.speed_momentum: weight of the newest observed seconds per step
};

// Throws ConfigError (exit 2) naming the first bad option: q_min >= 1, q_max >= q_min, lambda >= 1,
// speed_momentum in (0, 1].
void validateCompassOptions(const CompassOptions& options);

// What the server is told to do with a silo's work.
struct CompassAssignment {
  int client = 0;
  int localSteps = 0;
  int group = -1;              // -1: no group yet (a silo's first job, before its speed is known)
  double expectedArrival = 0;  // the group's expected arrival time (NaN for group -1)
  double latestArrival = 0;    // then the group is aggregated without the missing (NaN for -1)
};

struct CompassDecision {
  enum class Kind {
    Wait,      // the update joins its group's buffer; the silo idles until the group is aggregated
    Single,    // a silo's first arrival: aggregate its update alone now
    Buffered,  // a late arrival: its update waits for the next group aggregation (replacing an older
               // late update of the same silo); redispatch it now
    Group,     // aggregate `members` now (a group's arrivals plus the late updates buffered so far)
  };
  Kind kind = Kind::Wait;
  int group = -1;               // the group aggregated (Group) or the silo's group (Wait, Buffered)
  std::vector<int> members;     // silos whose updates enter this aggregation, ascending client id:
                                // `late` and the group's on-time arrivals (a silo in both enters with its
                                // on-time update, the newer; its late one is dropped)
  std::vector<int> late;        // the late updates buffered so far that enter it (Group), ascending id
  std::vector<int> onTime;      // the group's on-time arrivals (Group) or the silo itself (Single)
  std::vector<int> redispatch;  // silos to dispatch now, in this order (fastest first, ties by id)
};

class CompassScheduler {
 public:
  CompassScheduler(int numClients, CompassOptions options);

  // Sends `client` (idle) its next job at simulated time `now`: joins the open group it can reach with
  // the most steps in [q_min, q_max], or opens a new group. A silo never seen arriving gets q_max steps
  // and no group.
  CompassAssignment dispatch(int client, double now);

  // `client`'s update reaches the server at `now` after `stepsDone` local steps: updates its speed
  // estimate and says what to aggregate. The driver then dispatches `redispatch` in order.
  CompassDecision arrive(int client, double now, int stepsDone);

  // The earliest latest-arrival time among groups still waiting for members (ties: lower group id).
  // An arrival at exactly that time is on time: fire the deadline after the arrivals at its time.
  struct Deadline {
    double time = 0;
    int group = -1;
  };
  std::optional<Deadline> nextDeadline() const;

  // `group`'s latest-arrival time has passed (now >= it): aggregate the members that arrived (Group,
  // with the buffered late updates) or, when none did, nothing (Wait). The members still training
  // become late arrivals.
  CompassDecision expire(int group, double now);

  // Seconds per local step estimated for `client`; NaN before its first arrival.
  double speedEstimate(int client) const;
  int numClients() const { return static_cast<int>(clients_.size()); }

  // The whole state as doubles (integers exactly), and back. load() rejects a vector that was not
  // written by save() for the same number of clients (RuntimeError).
  std::vector<double> save() const;
  void load(const std::vector<double>& state);
  // save()/load() through a checkpoint archive under `name`.
  void checkpoint(StateArchive& ar, const std::string& name);

 private:
  enum class Phase { Idle, Training, WaitingForGroup };
  struct Client {
    double speed = 0;  // seconds per step; valid when hasSpeed
    bool hasSpeed = false;
    double dispatchedAt = 0;
    int steps = 0;
    int group = -1;
    Phase phase = Phase::Idle;
  };
  struct Group {
    int id = 0;
    double expected = 0;
    double latest = 0;
    bool closed = false;       // its deadline fired or it was aggregated: nobody joins, arrivals are late
    std::vector<int> pending;  // dispatched, not arrived (ascending id)
    std::vector<int> arrived;  // arrived on time, waiting for the aggregation (ascending id)
  };

  void checkClient(int client, const char* what) const;
  void observeSpeed(int client, double now, int stepsDone);
  Group* findGroup(int id);
  std::optional<CompassAssignment> joinGroup(int client, double now);
  CompassAssignment createGroup(int client, double now);
  CompassDecision aggregateGroup(Group& group);
  void dropEmptyGroups();

  CompassOptions options_;
  std::vector<Client> clients_;
  std::vector<Group> groups_;    // ascending id
  std::vector<int> lateBuffer_;  // late updates waiting for the next group aggregation (ascending id)
  int nextGroupId_ = 0;
};

}  // namespace fedsilo
