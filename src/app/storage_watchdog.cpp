#include "app/storage_watchdog.hpp"

#include <string>
#include <utility>

#include "core/error.hpp"
#include "io/storage_errors.hpp"

namespace fedsilo {

namespace {

// "10 s", "0.3 s": the patience as the message states it.
std::string secondsText(std::chrono::milliseconds d) {
  const long long ms = d.count();
  if (ms % 1000 == 0) return fmt(ms / 1000, " s");
  return fmt(static_cast<double>(ms) / 1000.0, " s");
}

}  // namespace

StorageWatchdog::StorageWatchdog(std::chrono::milliseconds patience, OnStuck onStuck,
                                 std::chrono::milliseconds lookEvery)
    : patience_(patience), lookEvery_(lookEvery), onStuck_(std::move(onStuck)), thread_([this] { loop(); }) {}

StorageWatchdog::~StorageWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void StorageWatchdog::begin(const std::string& phase, const std::string& file) {
  std::lock_guard<std::mutex> lock(mutex_);
  watching_ = true;
  phase_ = phase;
  file_ = file;
  since_ = std::chrono::steady_clock::now();
}

void StorageWatchdog::end() {
  std::lock_guard<std::mutex> lock(mutex_);
  watching_ = false;
}

void StorageWatchdog::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, lookEvery_);
    if (stopping_ || !watching_ || std::chrono::steady_clock::now() - since_ < patience_) continue;
    const std::string phase = phase_, file = file_;
    lock.unlock();  // the probe writes to the folder; the main thread may end the phase meanwhile
    const std::string problem = storageProblem(file);
    lock.lock();
    if (problem.empty() || !watching_ || phase_ != phase || file_ != file) continue;
    lock.unlock();
    const std::string what = fmt(phase, " did not complete in ", secondsText(patience_));
    std::string message = storageFailureMessage(what, file);
    if (message.empty()) message = fmt(what, ": ", problem, " (", file, ")");
    onStuck_(message);
    lock.lock();  // a handler that returns (the tests') gets the phase reported again while it lasts
  }
}

}  // namespace fedsilo
