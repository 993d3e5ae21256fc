// The per-round JSON Lines stream (output.jsonl = true): <output>.jsonl beside the results file, one
// JSON object per finished round, so that a run can be followed with `tail -f` or read without h5py.
// Rank 0 writes it. Each line goes out whole in one write(2) as its round ends, so a reader never sees
// half an object (unless the disk fills). A fresh run starts the file empty; a resumed run rewrites
// it from the checkpoint's rows (RoundRecorder) before going on, so it holds each round once, whatever
// the interrupted run had written after its checkpoint.
//
// Keys: round, evaluated, global_accuracy, global_loss, client_accuracy_mean, client_accuracy_worst10,
// participants, seconds, train_seconds, eta_seconds. Numbers are JSON numbers (doubles printed
// round-trip exact, so they equal the results file's /rounds entries); a figure that is NaN (a round
// that was not evaluated, no global model) is null.
#pragma once
#include <string>
#include <vector>

#include "fl/round_driver.hpp"

namespace fedsilo {

// One round as one JSON object on one line, ending in '\n'.
std::string roundJson(const RoundSummary& s, double etaSeconds);

// The time the run still needs after the last of `secondsSoFar` (the seconds of every round so far,
// rounds before a resume included): their mean times the rounds left of `rounds`.
double etaSeconds(const std::vector<double>& secondsSoFar, int rounds);

class JsonlStream {
 public:
  explicit JsonlStream(std::string path) : path_(std::move(path)) {}
  ~JsonlStream();
  JsonlStream(const JsonlStream&) = delete;
  JsonlStream& operator=(const JsonlStream&) = delete;

  const std::string& path() const { return path_; }
  // Replaces the file by `text` (written beside it, then renamed over it) and opens it for appending.
  // RuntimeError naming the file when it cannot be written.
  void restart(const std::string& text);
  // Appends `line` in one write.
  void append(const std::string& line);
  // Closes the file, checked: RuntimeError when the system reports a write it could not keep.
  void close();

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace fedsilo
