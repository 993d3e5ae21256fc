// Ends a run that a full disk has stuck inside parallel HDF5. HDF5 1.10 goes on to the next
// collective step of a flush or close after a metadata write that failed on one rank only, while the
// other ranks still wait in the step before: no rank returns to fedsilo, so the failure can neither
// be reported nor agreed on. Run control marks each collective write phase (a checkpoint; the results
// file's creation, each of its records (app/watched_sink.hpp) and its close) with a Watch; a thread
// looks every `lookEvery` (a second in a run), and a phase that has run longer than the patience
// while the folder of its file cannot take writes (storageProblem: no space, a quota, a read-only
// file system) is handed to onStuck, which reports it and aborts every rank.
// A slow phase on a healthy file system is never ended: the folder takes writes.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace fedsilo {

class StorageWatchdog {
 public:
  // onStuck gets the message of the storage failure ("<phase> did not complete in N s: <reason>
  // (<file>)") on the watchdog's thread and must not return.
  using OnStuck = std::function<void(const std::string& message)>;
  StorageWatchdog(std::chrono::milliseconds patience, OnStuck onStuck,
                  std::chrono::milliseconds lookEvery = std::chrono::seconds(1));
  ~StorageWatchdog();
  StorageWatchdog(const StorageWatchdog&) = delete;
  StorageWatchdog& operator=(const StorageWatchdog&) = delete;

  // Marks one write phase on `file` (described by `phase`, "writing the checkpoint") for as long as
  // it lives. Phases do not nest: a Watch replaces the one before it until it ends.
  class Watch {
   public:
    Watch(StorageWatchdog& dog, const std::string& phase, const std::string& file) : dog_(dog) {
      dog_.begin(phase, file);
    }
    ~Watch() { dog_.end(); }
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;

   private:
    StorageWatchdog& dog_;
  };

 private:
  void begin(const std::string& phase, const std::string& file);
  void end();
  void loop();

  const std::chrono::milliseconds patience_, lookEvery_;
  const OnStuck onStuck_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false, watching_ = false;
  std::string phase_, file_;
  std::chrono::steady_clock::time_point since_;
  std::thread thread_;  // last: started once everything it reads exists
};

}  // namespace fedsilo
