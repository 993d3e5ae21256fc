// The asynchronous driver (docs/async.md): runs an asynchronous algorithm (fl/async_algorithm.hpp) on
// the simulated clock. The algorithm's schedule (sim/async_schedule.hpp: which silo trains which job,
// of how many local steps for FedCompass, from which version, which arrivals make each version) is
// computed first, identically on every rank, from the system model's durations; this driver executes it:
//
//   trainReadyJobs  every job whose start version exists and whose update a later version needs is
//                   trained on its silo's rank, all ranks at once (the jobs that start from one version
//                   run in parallel, as a synchronous round's clients do)
//   stepVersion     the next version's buffered updates, weighted by the algorithm, reduced exactly to
//                   rank 0 (in one call with those of the versions after it whose updates are all
//                   trained: fl/version_sums.hpp); the algorithm's server step there; the new version
//                   broadcast; evaluated when due (eval.every versions or eval.every_seconds), one
//                   /rounds row
//
// Nothing depends on the rank count or MPI arrival order: the schedule comes from the configuration,
// a job's random streams are keyed by (seed, client, the client's job number), the reduction is exact.
// Evaluation and the end-of-training steps are the round driver's (fl/round_driver.hpp).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "fl/async_algorithm.hpp"
#include "fl/round_driver.hpp"
#include "fl/version_sums.hpp"
#include "sim/async_schedule.hpp"
#include "sim/system_model.hpp"

namespace fedsilo {

class AsyncDriver {
 public:
  // `rounds` evaluates the versions and finishes the training; both are kept by reference.
  AsyncDriver(const RoundParts& parts, AsyncAlgorithm& alg, RoundDriver& rounds);
  ~AsyncDriver();

  // Runs the versions [nextVersion(), cfg.rounds), calling `onVersion` after each (returning false
  // stops the run early). Returns whether every version ran (collective).
  bool run(RecordSink& sink, const std::function<bool(const RoundSummary&)>& onVersion);
  int nextVersion() const { return nextVersion_; }
  const AsyncSchedule& schedule() const { return schedule_; }
  // Saves or restores (collective, symmetric) the state between versions: the version to make next
  // and the models in-flight jobs start from (their updates are retrained on resume, bit for bit, as
  // their random streams are keyed), so a checkpoint restores at any rank count.
  void checkpoint(StateArchive& ar);

 private:
  // The seconds of the client's index-th job on the simulated clock when it trains `localSteps` steps
  // (0: train.epochs epochs). Without a system model every silo is equally fast: a job of epochs lasts
  // 1 s, a job of steps 1 s per step.
  double jobSeconds(int client, int index, int localSteps) const;
  void trainReadyJobs();
  void trainJob(int job);
  bool versionReady(int version) const;
  RoundSummary stepVersion(RecordSink& sink);
  AsyncServerInput serverInput(const AsyncVersion& version, int made);
  bool batchable(int made) const;
  void reduceBatch(int first);
  std::vector<float> broadcastSingleUpdate(const AsyncVersion& version);
  std::vector<float> spareUpdate();
  void keepSpare(std::vector<float>&& u);
  void consumeUpdates(const AsyncVersion& version);
  void reduceAndStep(const AsyncVersion& version, int made);
  void keepStartModel();
  void recordVersion(RecordSink& sink, const RoundSummary& summary, const ClientFigures& figures,
                     const AsyncVersion& version) const;
  bool needed(const AsyncJob& j) const { return j.version > nextVersion_; }
  const std::vector<float>& startModel(int version) const;

  RoundParts p_;
  AsyncAlgorithm& alg_;
  RoundDriver& rounds_;
  SystemModel system_;
  double flopsPerSample_ = 0.0;
  double downloadBytes_ = 0.0, uploadBytes_ = 0.0;
  VersionSums sums_;         // the reduced sums of the next versions of several updates (rank 0)
  std::vector<double> sum_;  // the server step's input (rank 0), reused from version to version
  AsyncSchedule schedule_;
  std::vector<char> evaluated_;                       // per version
  std::unique_ptr<ServerOptimizer> serverOptimizer_;  // fl.server_optimizer (null: none); state on rank 0
  int nextVersion_ = 0;
  double trainSeconds_ = 0.0;  // wall seconds of the training since the last version (every rank's longest)
  std::vector<char> trained_;  // per job (replicated)
  std::unordered_map<int, std::vector<float>> updates_;  // per trained local job not yet consumed
  std::vector<std::vector<float>> spare_;                // consumed updates' memory, for the next jobs
  std::map<int, std::vector<float>> startModels_;        // versions untrained jobs start from (replicated)
};

}  // namespace fedsilo
