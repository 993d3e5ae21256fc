// What a run shows while it runs. Every line fedsilo prints on standard output during a run goes
// through the Console: rank 0 prints, and nothing under --quiet. Warnings go to standard error
// ("fedsilo: warning: ..."), except under --quiet, which leaves only the error line of a failed run. The Console is the Announcer the algorithms and the
// round driver talk to (fl/announcer.hpp): decisions are printed as they are made, and a long round
// prints a progress line at most every output.progress_seconds.
//
// Progress costs no communication: rank 0 reports its own share of the phase and scales it to the
// whole (its fraction of its clients done, times every rank's clients; its samples per second, times
// every rank's samples over its own). With fl.placement = samples the ranks' shares are balanced, so
// the estimate is close; it is marked "~" whenever other ranks take part.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#include "core/config.hpp"
#include "fl/announcer.hpp"

namespace fedsilo {

class Console final : public Announcer {
 public:
  Console(bool isRoot, const OutputConfig& output, int rounds);

  // One line on standard output (rank 0, not under --quiet), flushed at once.
  void say(const std::string& line);
  bool quiet() const { return quiet_; }

  void decision(const std::string& text) override { say(text); }
  void warning(const std::string& text) override;
  void rankWarning(const std::string& text) override;
  void startPhase(int round, RoundPhase phase, const PhaseSize& mine, const PhaseSize& all) override;
  void clientDone(std::int64_t samples) override;

  // The progress line of the phase so far, `elapsedSeconds` into it (public for tests).
  std::string progressLine(double elapsedSeconds) const;

 private:
  using Clock = std::chrono::steady_clock;
  static double secondsBetween(Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double>(to - from).count();
  }

  const bool root_, quiet_;
  const double progressSeconds_;
  const int rounds_;
  Clock::time_point lastOutput_ = Clock::now(), phaseStart_ = Clock::now();
  int round_ = 0;
  RoundPhase phase_ = RoundPhase::Training;
  PhaseSize mine_, all_, done_;
};

// Seconds as h:mm:ss (the round lines' ETA column).
std::string clockTime(double seconds);

}  // namespace fedsilo
