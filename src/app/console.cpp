#include "app/console.hpp"

#include <cmath>
#include <cstdio>

#include "core/error.hpp"

namespace fedsilo {

Console::Console(bool isRoot, const OutputConfig& output, int rounds)
    : root_(isRoot), quiet_(output.quiet), progressSeconds_(output.progressSeconds), rounds_(rounds) {}

void Console::say(const std::string& line) {
  if (!root_ || quiet_) return;
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
  lastOutput_ = Clock::now();
}

void Console::warning(const std::string& text) {
  if (root_) rankWarning(text);
}

void Console::rankWarning(const std::string& text) {
  if (quiet_) return;
  std::fprintf(stderr, "fedsilo: warning: %s\n", text.c_str());
  std::fflush(stderr);
}

void Console::startPhase(int round, RoundPhase phase, const PhaseSize& mine, const PhaseSize& all) {
  round_ = round;
  phase_ = phase;
  mine_ = mine;
  all_ = all;
  done_ = PhaseSize{};
  phaseStart_ = Clock::now();
}

void Console::clientDone(std::int64_t samples) {
  done_.clients += 1;
  done_.samples += samples;
  // Only rank 0 prints; the clock is read only when a line may be due.
  if (!root_ || quiet_ || progressSeconds_ <= 0.0 || done_.clients >= mine_.clients) return;
  const Clock::time_point now = Clock::now();
  if (secondsBetween(lastOutput_, now) < progressSeconds_) return;
  say(progressLine(secondsBetween(phaseStart_, now)));
}

std::string Console::progressLine(double elapsedSeconds) const {
  const char* phase = phase_ == RoundPhase::Training ? "training" : "evaluating";
  const std::string when = round_ >= rounds_ ? std::string("final evaluation") : fmt("round ", round_, ", ", phase);
  const bool alone = mine_.clients == all_.clients;
  // Rank 0's share scaled to every rank's work (exact when rank 0 holds it all).
  const double fraction = mine_.clients > 0 ? static_cast<double>(done_.clients) / static_cast<double>(mine_.clients) : 0;
  const double scale = mine_.samples > 0 ? static_cast<double>(all_.samples) / static_cast<double>(mine_.samples) : 1;
  const double rate = elapsedSeconds > 0 ? static_cast<double>(done_.samples) / elapsedSeconds * scale : 0;
  char figures[160];
  if (alone)
    std::snprintf(figures, sizeof figures, "%lld/%lld clients, %.0f samples/s", static_cast<long long>(done_.clients),
                  static_cast<long long>(all_.clients), rate);
  else
    std::snprintf(figures, sizeof figures, "~%lld/%lld clients (rank 0: %lld/%lld), ~%.0f samples/s",
                  static_cast<long long>(std::llround(fraction * static_cast<double>(all_.clients))),
                  static_cast<long long>(all_.clients), static_cast<long long>(done_.clients),
                  static_cast<long long>(mine_.clients), rate);
  return fmt("progress: ", when, ": ", figures, ", ", clockTime(elapsedSeconds), " so far");
}

std::string clockTime(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "-";
  const auto total = static_cast<long long>(std::llround(seconds));
  char b[48];
  std::snprintf(b, sizeof b, "%lld:%02lld:%02lld", total / 3600, total / 60 % 60, total % 60);
  return b;
}

}  // namespace fedsilo
