#include "app/jsonl_stream.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"

namespace fedsilo {

namespace {

// A JSON number: the shortest of 15, 16 or 17 significant digits that reads back as the same double,
// or null for NaN and the infinities, which JSON cannot write.
std::string number(double x) {
  if (!std::isfinite(x)) return "null";
  char b[40];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(b, sizeof b, "%.*g", digits, x);
    if (std::strtod(b, nullptr) == x) break;
  }
  return b;
}

void writeAll(int fd, const std::string& text, const std::string& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw RuntimeError(fmt("output.jsonl: cannot write ", path, ": ", std::strerror(errno)));
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

std::string roundJson(const RoundSummary& s, double eta) {
  return fmt("{\"round\": ", s.round, ", \"evaluated\": ", s.evaluated ? "true" : "false",
             ", \"global_accuracy\": ", number(s.globalAccuracy), ", \"global_loss\": ", number(s.globalLoss),
             ", \"client_accuracy_mean\": ", number(s.meanClientAccuracy),
             ", \"client_accuracy_worst10\": ", number(s.worst10), ", \"participants\": ", s.participants,
             ", \"seconds\": ", number(s.seconds), ", \"train_seconds\": ", number(s.trainSeconds),
             ", \"eta_seconds\": ", number(eta),
             std::isnan(s.epsilon) ? std::string() : fmt(", \"epsilon\": ", number(s.epsilon)),
             std::isnan(s.simTime) ? std::string()
                                   : fmt(", \"sim_seconds\": ", number(s.simSeconds), ", \"sim_time\": ", number(s.simTime)),
             "}\n");
}

double etaSeconds(const std::vector<double>& secondsSoFar, int rounds) {
  if (secondsSoFar.empty()) return std::nan("");
  double sum = 0.0;
  for (double s : secondsSoFar) sum += s;
  const auto left = static_cast<double>(rounds) - static_cast<double>(secondsSoFar.size());
  return left > 0 ? sum / static_cast<double>(secondsSoFar.size()) * left : 0.0;
}

JsonlStream::~JsonlStream() {
  if (fd_ >= 0) ::close(fd_);  // unchecked here; close() reports the result of a run that finishes
}

void JsonlStream::close() {
  const int fd = fd_;
  fd_ = -1;
  if (fd >= 0 && ::close(fd) != 0)
    throw RuntimeError(fmt("output.jsonl: cannot write ", path_, ": ", std::strerror(errno)));
}

void JsonlStream::restart(const std::string& text) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  const std::string tmp = path_ + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw RuntimeError(fmt("output.jsonl: cannot create ", tmp, ": ", std::strerror(errno)));
  try {
    writeAll(fd, text, tmp);
  } catch (...) {
    ::close(fd);
    std::remove(tmp.c_str());
    throw;
  }
  // close(2) reports a write the file system could not keep (NFS: ENOSPC and EDQUOT show there).
  if (::close(fd) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw RuntimeError(fmt("output.jsonl: cannot write ", tmp, ": ", std::strerror(err)));
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0)
    throw RuntimeError(fmt("output.jsonl: cannot rename ", tmp, " to ", path_, ": ", std::strerror(errno)));
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) throw RuntimeError(fmt("output.jsonl: cannot open ", path_, ": ", std::strerror(errno)));
}

void JsonlStream::append(const std::string& line) {
  FEDSILO_ASSERT(fd_ >= 0, "the JSON Lines stream is not open");
  writeAll(fd_, line, path_);
}

}  // namespace fedsilo
