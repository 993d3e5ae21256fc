#include "app/storage_watchdog.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "app/watched_sink.hpp"
#include "support/null_sink.hpp"
#include "support/test_support.hpp"

namespace fedsilo {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The tests' watchdog: patience 300 ms, a look every 50 ms (a run's: 10 s and 1 s), so that every
// wait below is a few looks past the patience.
constexpr milliseconds kPatience{300}, kLook{50};

// Collects the first message the watchdog hands over (it looks again every kLook while the phase
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
  StorageWatchdog dog(kPatience, report.handler(), kLook);
  const std::string file = test::tempDir("watchdog_missing") + "/no_such_folder/r.h5.ckpt.tmp";
  const StorageWatchdog::Watch watch(dog, "writing the checkpoint", file);
  std::future<std::string> message = report.first.get_future();
  ASSERT_EQ(message.wait_for(seconds(30)), std::future_status::ready) << "the stuck phase was never reported";
  const std::string text = message.get();
  EXPECT_NE(text.find("writing the checkpoint did not complete in 0.3 s"), std::string::npos) << text;
  EXPECT_NE(text.find("No such file or directory"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - file.size() - 2), "(" + file + ")") << text;
}

// A phase that outlasts the patience on a folder that takes writes is a slow file system, not a
// full one: it is never ended.
TEST(StorageWatchdog, LeavesASlowPhaseOnAWritableFolderAlone) {
  StuckReport report;
  StorageWatchdog dog(kPatience, report.handler(), kLook);
  {
    const StorageWatchdog::Watch watch(dog, "writing the checkpoint", test::tempDir("watchdog_ok") + "/r.h5.ckpt.tmp");
    std::this_thread::sleep_for(seconds(1));
  }
  EXPECT_EQ(report.calls.load(), 0);
}

// Outside a phase nothing is watched, whatever the folder.
TEST(StorageWatchdog, WatchesOnlyWhileAPhaseLasts) {
  StuckReport report;
  StorageWatchdog dog(kPatience, report.handler(), kLook);
  { const StorageWatchdog::Watch watch(dog, "closing the results file", "/proc/no_such_folder/r.h5.partial"); }
  std::this_thread::sleep_for(seconds(1));
  EXPECT_EQ(report.calls.load(), 0);
}

// A results file whose round rows block (a write stuck inside parallel HDF5): this one's client rows
// take `stall` each.
class SlowRowsSink : public test::MemorySink {
 public:
  explicit SlowRowsSink(milliseconds stall) : stall_(stall) {}
  void appendRoundClients(const std::string& name, const std::vector<double>& local) override {
    std::this_thread::sleep_for(stall_);
    MemorySink::appendRoundClients(name, local);
  }

 private:
  milliseconds stall_;
};

// Each record through a WatchedSink is a write phase: one that blocks past the patience on a folder
// that cannot take writes is reported under the sink's phase and file; the records reach the target.
TEST(WatchedSink, ReportsARecordStuckOnAFolderThatCannotTakeWrites) {
  StuckReport report;
  StorageWatchdog dog(kPatience, report.handler(), kLook);
  SlowRowsSink file(milliseconds(1500));
  const std::string partial = test::tempDir("watched_missing") + "/no_such_folder/r.h5.partial";
  WatchedSink sink(file, dog, "writing the results file", partial);
  sink.appendRoundInt("round", 0);
  sink.appendRoundClients("client_accuracy", {0.25, 0.75});
  std::future<std::string> message = report.first.get_future();
  ASSERT_EQ(message.wait_for(seconds(0)), std::future_status::ready) << "the stuck record was not reported";
  const std::string text = message.get();
  EXPECT_NE(text.find("writing the results file did not complete in 0.3 s"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - partial.size() - 2), "(" + partial + ")") << text;
  EXPECT_EQ(file.scalars["round"], std::vector<double>{0});
  EXPECT_EQ(file.rows["client_accuracy"], (std::vector<std::vector<double>>{{0.25, 0.75}}));
}

// Between the records (training, the round line) nothing is watched, however long it lasts.
TEST(WatchedSink, WatchesOnlyWhileARecordIsWritten) {
  StuckReport report;
  StorageWatchdog dog(kPatience, report.handler(), kLook);
  test::MemorySink file;
  WatchedSink sink(file, dog, "writing the results file", "/proc/no_such_folder/r.h5.partial");
  sink.appendRoundInt("round", 0);
  sink.writeScalar("/summary/mean", 0.5);
  std::this_thread::sleep_for(seconds(1));
  EXPECT_EQ(report.calls.load(), 0);
  EXPECT_EQ(file.values["/summary/mean"], std::vector<double>{0.5});
}

}  // namespace
}  // namespace fedsilo
