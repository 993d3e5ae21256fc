#include "sim/compass_scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <utility>

#include "core/error.hpp"
#include "core/state_archive.hpp"

namespace fedsilo {

namespace {

// A silo measured at zero seconds (a clock without durations) would divide by zero; a floor this small
// keeps every silo reachable with q_max steps and changes nothing measurable otherwise.
constexpr double kMinSecondsPerStep = 1e-12;
// floor() of a quotient like (t + q x s - t) / s can land just below q in floating point; this guard
// keeps an exact fit an exact fit.
constexpr double kStepRoundingGuard = 1e-9;
constexpr double kStateTag = 20240514;  // marks a vector written by save()
constexpr double kStateVersion = 1;

int reachableSteps(double seconds, double secondsPerStep) {
  const double x = std::floor(seconds / secondsPerStep + kStepRoundingGuard);
  return x > std::numeric_limits<int>::max() ? std::numeric_limits<int>::max() : static_cast<int>(x);
}

void insertSorted(std::vector<int>& v, int x) { v.insert(std::lower_bound(v.begin(), v.end(), x), x); }

void eraseValue(std::vector<int>& v, int x) { v.erase(std::remove(v.begin(), v.end(), x), v.end()); }

// Reads the flat state vector front to back, refusing anything out of range.
class StateReader {
 public:
  explicit StateReader(const std::vector<double>& v) : v_(v) {}
  double real() {
    if (pos_ >= v_.size()) fail("ends early");
    return v_[pos_++];
  }
  int integer(int lo, int hi) {
    const double x = real();
    if (!(x >= lo && x <= hi) || x != std::floor(x))
      fail(fmt("has ", x, " where an integer in [", lo, ", ", hi, "] belongs"));
    return static_cast<int>(x);
  }
  std::vector<int> ids(int numClients) {
    std::vector<int> out(static_cast<std::size_t>(integer(0, numClients)));
    for (int& id : out) id = integer(0, numClients - 1);
    return out;
  }
  bool atEnd() const { return pos_ == v_.size(); }
  [[noreturn]] static void fail(const std::string& why) {
    throw RuntimeError("FedCompass scheduler state " + why + " (not a checkpoint of this run's scheduler)");
  }

 private:
  const std::vector<double>& v_;
  std::size_t pos_ = 0;
};

void appendIds(std::vector<double>& out, const std::vector<int>& ids) {
  out.push_back(static_cast<double>(ids.size()));
  for (int id : ids) out.push_back(id);
}

}  // namespace

void validateCompassOptions(const CompassOptions& o) {
  if (o.qMin < 1) throw ConfigError(fmt("fedcompass.q_min = ", o.qMin, ": expected an integer >= 1"));
  if (o.qMax < o.qMin)
    throw ConfigError(fmt("fedcompass.q_max = ", o.qMax, ": expected an integer >= fedcompass.q_min (", o.qMin, ")"));
  if (!(o.lambda >= 1.0) || !std::isfinite(o.lambda))
    throw ConfigError(fmt("fedcompass.lambda = ", o.lambda, ": expected a finite number >= 1"));
  if (!(o.speedMomentum > 0.0 && o.speedMomentum <= 1.0))
    throw ConfigError(fmt("fedcompass.speed_momentum = ", o.speedMomentum, ": expected a number in (0, 1]"));
}

CompassScheduler::CompassScheduler(int numClients, CompassOptions options)
    : options_(options), clients_(static_cast<std::size_t>(std::max(numClients, 0))) {
  validateCompassOptions(options_);
  FEDSILO_ASSERT(numClients >= 1, "a FedCompass scheduler needs at least one client, got ", numClients);
}

void CompassScheduler::checkClient(int client, const char* what) const {
  FEDSILO_ASSERT(client >= 0 && client < numClients(), what, ": client ", client, " of ", numClients());
}

double CompassScheduler::speedEstimate(int client) const {
  checkClient(client, "speedEstimate");
  const Client& c = clients_[static_cast<std::size_t>(client)];
  return c.hasSpeed ? c.speed : std::numeric_limits<double>::quiet_NaN();
}

CompassScheduler::Group* CompassScheduler::findGroup(int id) {
  for (Group& g : groups_)
    if (g.id == id) return &g;
  return nullptr;
}

CompassAssignment CompassScheduler::dispatch(int client, double now) {
  checkClient(client, "dispatch");
  Client& c = clients_[static_cast<std::size_t>(client)];
  FEDSILO_ASSERT(c.phase == Phase::Idle, "dispatch of client ", client, ", which is not idle");
  CompassAssignment a;
  if (!c.hasSpeed) {
    const double unknown = std::numeric_limits<double>::quiet_NaN();
    a = CompassAssignment{client, options_.qMax, -1, unknown, unknown};
  } else if (auto joined = joinGroup(client, now)) {
    a = *joined;
  } else {
    a = createGroup(client, now);
  }
  c.phase = Phase::Training;
  c.dispatchedAt = now;
  c.steps = a.localSteps;
  c.group = a.group;
  return a;
}

// The open group (lowest id on a tie) the silo can reach with the most steps in [q_min, q_max].
std::optional<CompassAssignment> CompassScheduler::joinGroup(int client, double now) {
  const double speed = clients_[static_cast<std::size_t>(client)].speed;
  Group* best = nullptr;
  int bestSteps = -1;
  for (Group& g : groups_) {
    if (g.closed || !(g.expected > now)) continue;
    const int steps = reachableSteps(g.expected - now, speed);
    if (steps < options_.qMin || steps > options_.qMax || steps <= bestSteps) continue;
    best = &g;
    bestSteps = steps;
  }
  if (best == nullptr) return std::nullopt;
  insertSorted(best->pending, client);
  return CompassAssignment{client, bestSteps, best->id, best->expected, best->latest};
}

// A new group for a silo no open group fits. Its steps aim at the time an open group's fastest member
// would come back after that group's latest arrival with q_max steps, so the groups can merge later;
// the most such steps within q_max, raised to q_min; q_max when no open group gives one.
CompassAssignment CompassScheduler::createGroup(int client, double now) {
  const double speed = clients_[static_cast<std::size_t>(client)].speed;
  int steps = -1;
  for (const Group& g : groups_) {
    if (g.closed || !(now < g.latest)) continue;
    double fastest = std::numeric_limits<double>::infinity();
    for (int m : g.pending) fastest = std::min(fastest, clients_[static_cast<std::size_t>(m)].speed);
    for (int m : g.arrived) fastest = std::min(fastest, clients_[static_cast<std::size_t>(m)].speed);
    const int s = reachableSteps(g.latest + fastest * options_.qMax - now, speed);
    if (s <= options_.qMax) steps = std::max(steps, s);
  }
  if (steps < 0) steps = options_.qMax;
  steps = std::max(steps, options_.qMin);
  Group g;
  g.id = nextGroupId_++;
  g.expected = now + steps * speed;
  g.latest = now + steps * speed * options_.lambda;
  g.pending = {client};
  groups_.push_back(g);
  return CompassAssignment{client, steps, g.id, g.expected, g.latest};
}

void CompassScheduler::observeSpeed(int client, double now, int stepsDone) {
  Client& c = clients_[static_cast<std::size_t>(client)];
  const double observed = std::max((now - c.dispatchedAt) / stepsDone, kMinSecondsPerStep);
  const double m = options_.speedMomentum;
  c.speed = c.hasSpeed ? (1.0 - m) * c.speed + m * observed : observed;
  c.hasSpeed = true;
}

CompassDecision CompassScheduler::arrive(int client, double now, int stepsDone) {
  checkClient(client, "arrive");
  Client& c = clients_[static_cast<std::size_t>(client)];
  FEDSILO_ASSERT(c.phase == Phase::Training, "arrival of client ", client, ", which was not training");
  FEDSILO_ASSERT(stepsDone >= 1, "client ", client, " arrived after ", stepsDone, " local steps");
  FEDSILO_ASSERT(now >= c.dispatchedAt, "client ", client, " arrived at ", now, " before its dispatch at ",
                 c.dispatchedAt);
  observeSpeed(client, now, stepsDone);
  CompassDecision d;
  if (c.group < 0) {  // its first job: nothing to wait for
    c.phase = Phase::Idle;
    d.kind = CompassDecision::Kind::Single;
    d.members = {client};
    d.onTime = {client};
    d.redispatch = {client};
    return d;
  }
  Group* g = findGroup(c.group);
  FEDSILO_ASSERT(g != nullptr, "client ", client, " arrived for group ", c.group, ", which is gone");
  eraseValue(g->pending, client);
  d.group = g->id;
  if (g->closed || now > g->latest) {
    FEDSILO_ASSERT(g->closed || g->arrived.empty(), "group ", g->id, "'s deadline at ", g->latest,
                   " was not fired before an arrival at ", now);
    c.phase = Phase::Idle;
    c.group = -1;
    // A silo late twice before the next group aggregation: its newer update replaces the older one
    // (the authors' implementation keys its buffer by client), so it counts once.
    if (!std::binary_search(lateBuffer_.begin(), lateBuffer_.end(), client)) insertSorted(lateBuffer_, client);
    d.kind = CompassDecision::Kind::Buffered;
    d.redispatch = {client};
    g->closed = true;  // its deadline has passed: nobody joins it any more
    dropEmptyGroups();
    return d;
  }
  c.phase = Phase::WaitingForGroup;
  insertSorted(g->arrived, client);
  if (!g->pending.empty()) return d;  // Wait
  return aggregateGroup(*g);
}

std::optional<CompassScheduler::Deadline> CompassScheduler::nextDeadline() const {
  std::optional<Deadline> next;
  for (const Group& g : groups_) {
    if (g.closed) continue;
    if (!next || g.latest < next->time) next = Deadline{g.latest, g.id};
  }
  return next;
}

CompassDecision CompassScheduler::expire(int group, double now) {
  Group* g = findGroup(group);
  FEDSILO_ASSERT(g != nullptr && !g->closed, "expire of group ", group, ", which is not waiting");
  FEDSILO_ASSERT(now >= g->latest, "expire of group ", group, " at ", now, " before its latest arrival ", g->latest);
  g->closed = true;
  if (!g->arrived.empty()) return aggregateGroup(*g);
  CompassDecision d;
  d.group = group;
  dropEmptyGroups();
  return d;
}

// The group's arrivals and the late updates buffered so far enter one aggregation; the arrivals are
// redispatched fastest first (ties by id), as the authors' implementation does, so the fast silos
// open the next groups that the slower ones then join.
CompassDecision CompassScheduler::aggregateGroup(Group& g) {
  CompassDecision d;
  d.kind = CompassDecision::Kind::Group;
  d.group = g.id;
  std::set_union(lateBuffer_.begin(), lateBuffer_.end(), g.arrived.begin(), g.arrived.end(),
                 std::back_inserter(d.members));
  d.late = std::move(lateBuffer_);
  d.onTime = g.arrived;
  lateBuffer_.clear();
  d.redispatch = g.arrived;
  std::stable_sort(d.redispatch.begin(), d.redispatch.end(), [this](int a, int b) {
    return clients_[static_cast<std::size_t>(a)].speed < clients_[static_cast<std::size_t>(b)].speed;
  });
  for (int m : g.arrived) {
    clients_[static_cast<std::size_t>(m)].phase = Phase::Idle;
    clients_[static_cast<std::size_t>(m)].group = -1;
  }
  g.arrived.clear();
  g.closed = true;
  dropEmptyGroups();
  return d;
}

void CompassScheduler::dropEmptyGroups() {
  groups_.erase(std::remove_if(groups_.begin(), groups_.end(),
                               [](const Group& g) { return g.closed && g.pending.empty() && g.arrived.empty(); }),
                groups_.end());
}

std::vector<double> CompassScheduler::save() const {
  std::vector<double> out{kStateTag, kStateVersion, static_cast<double>(numClients()),
                          static_cast<double>(nextGroupId_)};
  for (const Client& c : clients_) {
    out.insert(out.end(), {c.speed, c.hasSpeed ? 1.0 : 0.0, c.dispatchedAt, static_cast<double>(c.steps),
                           static_cast<double>(c.group), static_cast<double>(static_cast<int>(c.phase))});
  }
  appendIds(out, lateBuffer_);
  out.push_back(static_cast<double>(groups_.size()));
  for (const Group& g : groups_) {
    out.insert(out.end(), {static_cast<double>(g.id), g.expected, g.latest, g.closed ? 1.0 : 0.0});
    appendIds(out, g.pending);
    appendIds(out, g.arrived);
  }
  return out;
}

void CompassScheduler::load(const std::vector<double>& state) {
  StateReader r(state);
  if (r.real() != kStateTag) StateReader::fail("has no FedCompass tag");
  if (r.real() != kStateVersion) StateReader::fail("has an unknown version");
  const int k = r.integer(0, std::numeric_limits<int>::max());
  if (k != numClients()) StateReader::fail(fmt("is for ", k, " clients, this run has ", numClients()));
  const int nextGroupId = r.integer(0, std::numeric_limits<int>::max());
  std::vector<Client> clients(clients_.size());
  for (Client& c : clients) {
    c.speed = r.real();
    c.hasSpeed = r.integer(0, 1) == 1;
    c.dispatchedAt = r.real();
    c.steps = r.integer(0, std::numeric_limits<int>::max());
    c.group = r.integer(-1, nextGroupId - 1);
    c.phase = static_cast<Phase>(r.integer(0, static_cast<int>(Phase::WaitingForGroup)));
  }
  std::vector<int> late = r.ids(k);
  std::vector<Group> groups(static_cast<std::size_t>(r.integer(0, nextGroupId)));
  for (Group& g : groups) {
    g.id = r.integer(0, nextGroupId - 1);
    g.expected = r.real();
    g.latest = r.real();
    g.closed = r.integer(0, 1) == 1;
    g.pending = r.ids(k);
    g.arrived = r.ids(k);
  }
  if (!r.atEnd()) StateReader::fail("has trailing values");
  clients_ = std::move(clients);
  lateBuffer_ = std::move(late);
  groups_ = std::move(groups);
  nextGroupId_ = nextGroupId;
}

void CompassScheduler::checkpoint(StateArchive& ar, const std::string& name) {
  std::vector<double> state;
  if (ar.saving()) state = save();
  ar.doubles(name, state);
  if (!ar.saving()) load(state);
}

}  // namespace fedsilo
