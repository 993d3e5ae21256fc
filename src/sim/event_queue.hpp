// The simulated clock's event queue: events come out in (time, client id) order, ties on both in the
// order they were pushed. Nothing in it depends on wall time, MPI arrival order or the rank that hosts
// a client, so every rank that pushes the same events pops them in the same order (what an
// event-driven driver, e.g. asynchronous aggregation, needs to be identical at any rank count).
#pragma once
#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace fedsilo {

template <typename Payload>
class EventQueue {
 public:
  struct Event {
    double time = 0.0;
    int client = 0;
    Payload payload{};
    std::uint64_t sequence = 0;  // push order, the last tie-break
  };

  void push(double time, int client, Payload payload) {
    events_.push(Event{time, client, std::move(payload), pushed_++});
  }
  bool empty() const { return events_.empty(); }
  std::size_t size() const { return events_.size(); }
  const Event& top() const {
    FEDSILO_ASSERT(!events_.empty(), "top() of an empty event queue");
    return events_.top();
  }
  Event pop() {
    Event e = top();
    events_.pop();
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time != b.time) return a.time > b.time;
      if (a.client != b.client) return a.client > b.client;
      return a.sequence > b.sequence;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> events_;
  std::uint64_t pushed_ = 0;
};

}  // namespace fedsilo
