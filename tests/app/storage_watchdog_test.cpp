#include "app/storage_watchdog.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "support/test_support.hpp"

namespace fedsilo {
namespace {

using std::chrono::seconds;

// Collects the first message the watchdog hands over (it looks again every second while the phase
// lasts; the run's handler aborts, this one returns).
struct StuckReport {
  std::promise<std::string> first;
  std::atomic<int> calls{0};
  StorageWatchdog::OnStuck handler() {
    return [this](const std::string& message) {
      if (calls++ == 0) first.set_value(message);
    };
  }
};

// A phase whose folder cannot take a file (it does not exist) is ended once the patience is over,
// with a message that names the phase, the patience, the folder's problem and the file.
TEST(StorageWatchdog, EndsAPhaseWhoseFolderCannotTakeWrites) {
  StuckReport report;
  StorageWatchdog dog(seconds(1), report.handler());
  const std::string file = test::tempDir("watchdog_missing") + "/no_such_folder/r.h5.ckpt.tmp";
  const StorageWatchdog::Watch watch(dog, "writing the checkpoint", file);
  std::future<std::string> message = report.first.get_future();
  ASSERT_EQ(message.wait_for(seconds(30)), std::future_status::ready) << "the stuck phase was never reported";
  const std::string text = message.get();
  EXPECT_NE(text.find("writing the checkpoint did not complete in 1 s"), std::string::npos) << text;
  EXPECT_NE(text.find("No such file or directory"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - file.size() - 2), "(" + file + ")") << text;
}

// A phase that outlasts the patience on a folder that takes writes is a slow file system, not a
// full one: it is never ended.
TEST(StorageWatchdog, LeavesASlowPhaseOnAWritableFolderAlone) {
  StuckReport report;
  StorageWatchdog dog(seconds(1), report.handler());
  {
    const StorageWatchdog::Watch watch(dog, "writing the checkpoint", test::tempDir("watchdog_ok") + "/r.h5.ckpt.tmp");
    std::this_thread::sleep_for(seconds(3));
  }
  EXPECT_EQ(report.calls.load(), 0);
}

// Outside a phase nothing is watched, whatever the folder.
TEST(StorageWatchdog, WatchesOnlyWhileAPhaseLasts) {
  StuckReport report;
  StorageWatchdog dog(seconds(1), report.handler());
  { const StorageWatchdog::Watch watch(dog, "closing the results file", "/proc/no_such_folder/r.h5.partial"); }
  std::this_thread::sleep_for(seconds(3));
  EXPECT_EQ(report.calls.load(), 0);
}

}  // namespace
}  // namespace fedsilo
