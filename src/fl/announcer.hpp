// What a run has to tell the person watching it, from code that must not print: algorithms announce
// their decisions as they make them (PLayer-FL's split layer, the chosen alpha, GEMS widths, ...) and
// the round driver reports its progress through a round. The application decides what is shown and
// where (app/console: rank 0's standard output, warnings on standard error, --quiet); algorithms
// never print and never call MPI.
#pragma once
#include <cstdint>
#include <string>

namespace fedsilo {

// The parts of a round long enough to report progress in.
enum class RoundPhase { Training, Evaluating };

// The work of a phase: clients and the samples they hold.
struct PhaseSize {
  std::int64_t clients = 0;
  std::int64_t samples = 0;
};

class Announcer {
 public:
  virtual ~Announcer() = default;
  // A decision, as it is made, in one line ("playerfl: round 0: federating ..."). Call it where the
  // decision is made: on rank 0 (serverUpdate) or on every rank alike (setup); rank 0's is shown.
  virtual void decision(const std::string& text) = 0;
  // Something the results depend on that went wrong without stopping the run, known to rank 0 (or to
  // every rank alike); rank 0's is shown.
  virtual void warning(const std::string& text) = 0;
  // The same for something only the calling rank knows (one of its clients): every rank's is shown.
  virtual void rankWarning(const std::string& text) = 0;
  // Progress (the round driver, on every rank, without communication): a phase of `round` starts with
  // `mine` of this rank's work and `all` of every rank's; then each of this rank's clients finishes,
  // with the samples it went through. round = the number of rounds: the final evaluation.
  virtual void startPhase(int round, RoundPhase phase, const PhaseSize& mine, const PhaseSize& all) = 0;
  virtual void clientDone(std::int64_t samples) = 0;
};

// An announcer that shows nothing: the default of library code and unit tests.
Announcer& silentAnnouncer();

}  // namespace fedsilo
