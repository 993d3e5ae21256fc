#include "app/run_control.hpp"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include "app/config_parser.hpp"
#include "app/console.hpp"
#include "app/fault_injection.hpp"
#include "app/finished_results.hpp"
#include "app/input_fingerprint.hpp"
#include "app/jsonl_stream.hpp"
#include "app/kernel_choice.hpp"
#include "app/output_paths.hpp"
#include "app/resume_check.hpp"
#include "app/round_recorder.hpp"
#include "app/signals.hpp"
#include "app/storage_watchdog.hpp"
#include "app/watched_sink.hpp"
#include "core/timer.hpp"
#include "fl/experiment.hpp"
#include "io/checkpoint.hpp"
#include "io/model_reader.hpp"
#include "io/results_writer.hpp"
#include "io/root_files.hpp"
#include "nn/kernels.hpp"
#include "io/storage_errors.hpp"

namespace fedsilo {

namespace {

// How long a collective write phase (a checkpoint; the results file's creation, records and close)
// may run while its folder cannot take writes before the run is ended as stuck
// (app/storage_watchdog.hpp), and how much longer ranks other than 0 wait, so that rank 0 speaks first.
constexpr std::chrono::seconds kStuckWritePatience{10};
constexpr std::chrono::seconds kRankReportDelay{3};

void writeRootAttributes(ResultsWriter& w, const ExperimentConfig& cfg, const Communicator& comm) {
  w.writeRootAttribute("format", std::string("fedsilo-results-1"));
  w.writeRootAttribute("version", std::string(FEDSILO_VERSION));
  w.writeRootAttribute("config", cfg.resolvedIni);
  w.writeRootAttribute("algorithm", cfg.algorithm);
  w.writeRootAttribute("dataset", std::string(nameOf(cfg.data.dataset)));
  w.writeRootAttribute("model", std::string(nameOf(cfg.model.name)));
  w.writeRootAttribute("seed", static_cast<std::int64_t>(cfg.seed));
  w.writeRootAttribute("num_clients", static_cast<std::int64_t>(cfg.clients));
  w.writeRootAttribute("num_ranks", static_cast<std::int64_t>(comm.size()));
  w.writeRootAttribute("num_rounds", static_cast<std::int64_t>(cfg.rounds));
  w.writeRootAttribute("kernels", std::string(isaName(activeIsa())));
}

// A figure of the round line: "-" in a round that was not evaluated (eval.every), "n/a" where the
// figure cannot be computed (no global model, empty test splits).
std::string fmtAcc(double x, bool evaluated) {
  if (!evaluated) return "-";
  if (!std::isfinite(x)) return "n/a";
  char b[32];
  std::snprintf(b, sizeof b, "%.4f", x);
  return b;
}

// "1 round", "20 rounds".
std::string counted(long long n, const char* noun) { return fmt(n, " ", noun, n == 1 ? "" : "s"); }

// The round line under the header printed by printBanner; a private run adds the privacy loss so far,
// a run with the system model the round's and the total simulated seconds.
std::string roundLine(const RoundSummary& s, double eta, bool withEpsilon, bool withSim) {
  char b[220];
  const int n = std::snprintf(b, sizeof b, "%6d %10s %10s %10s %9.3f %9.3f %9s", s.round,
                              fmtAcc(s.globalAccuracy, s.evaluated).c_str(),
                              fmtAcc(s.meanClientAccuracy, s.evaluated).c_str(),
                              fmtAcc(s.worst10, s.evaluated).c_str(), s.trainSeconds, s.seconds, clockTime(eta).c_str());
  if (withEpsilon && n > 0 && n < static_cast<int>(sizeof b))
    std::snprintf(b + n, sizeof b - static_cast<std::size_t>(n), " %10.4g", s.epsilon);
  const auto used = std::strlen(b);
  if (withSim) std::snprintf(b + used, sizeof b - used, " %10.4g %10.4g", s.simSeconds, s.simTime);
  return b;
}

// The inputs the configuration does not pin down must be those of the checkpoint (see
// app/input_fingerprint.hpp): a resume over other data would mix two experiments in one results file.
void checkInputFingerprint(const CheckpointInfo& info, const std::string& path, std::int64_t data,
                           std::int64_t partition) {
  if (info.dataCrc != data)
    throw DataError(fmt("--resume: the data differ from those that ", path, " was written with (CRC-32C ", data,
                        ", the checkpoint recorded ", info.dataCrc, "): a data file was replaced or changed since; ",
                        "restore it, or remove the checkpoint to start over"));
  if (info.partitionCrc != partition)
    throw DataError(fmt("--resume: the partition of the clients differs from the one that ", path,
                        " was written with (CRC-32C ", partition, ", the checkpoint recorded ", info.partitionCrc,
                        "); remove the checkpoint to start over"));
}

// One results row per finished round: counters that disagree were not written by fedsilo (or were
// edited), and resuming from them would mix rounds.
void checkRoundCounters(const CheckpointInfo& info, const std::string& path, int rounds) {
  if (info.rows != info.nextRound)
    throw RuntimeError(fmt("checkpoint ", path, ": next_round = ", info.nextRound, " and rows = ", info.rows,
                           " disagree (one results row per finished round)"));
  if (info.nextRound > rounds)
    throw RuntimeError(fmt("checkpoint ", path, ": next_round = ", info.nextRound,
                           " is past the configuration's rounds = ", rounds));
}

// One run of an experiment on this rank, in the order run() calls the steps: check the output's
// names and folder, take its lock (from here on the output's files are this run's), find and check
// the checkpoint to resume from, build the experiment and restore it, open the results file (and the
// JSON Lines stream), run the rounds (a line each with the run's ETA, periodic checkpoints, stop
// requests agreed by every rank), then the final records or the stop. What it prints goes through
// console_. dryRun() makes the same start-up steps and stops before the results file.
class RunControl {
 public:
  RunControl(const ExperimentConfig& cfg, const Communicator& comm, const FaultPlan& faults)
      : cfg_(cfg), comm_(comm), faults_(faults, comm.rank()), console_(comm.isRoot(), cfg.output, cfg.rounds),
        files_(cfg.output.path), ckptPath_(checkpointPath(cfg.output.path)), partialPath_(files_.partial),
        countPlacement_(cfg.clients, comm.size()) {}

  int run();
  int dryRun();
  // After a failure only this rank saw (outside a coordinated region): the other ranks may be blocked
  // in a collective HDF5 call, and closing these files is collective too, so closing would hang.
  // Abandon them and remove the partial results file, a half-written checkpoint and the lock file,
  // but only when they are this run's (it holds the output's lock: on a file system without locks
  // they may be another run's, and stay); main() then aborts every rank.
  // Rank 0 keeps its lock on the removed lock file until it exits: a run that starts meanwhile makes
  // a new one, which the other ranks of this run cannot touch: each of their steps that names a file
  // (create, rename, remove) follows a collective call that cannot complete without this rank.
  void abandonFiles() {
    (void)writer_.release();
    (void)from_.release();
    removeRunFiles();
    lock_.holdUntilExit();
  }
  // After a failure every rank agreed on: close the resume checkpoint here, on every rank together
  // (a Checkpoint destroyed by unwinding abandons its file instead of closing it collectively).
  void closeCheckpoint() { from_.reset(); }
  // The file the run was writing when it failed, for the message of a storage failure: the results
  // file's partial file, or, while one is saved, the new checkpoint or <output>.jsonl.
  const std::string& fileBeingWritten() const { return *writing_; }

 private:
  bool startUp(FolderMode folders);
  bool findCheckpoint();
  void openCheckpoint();
  void restoreFromCheckpoint();
  void releaseKeptPartial();
  void removeRunFiles() const;
  [[noreturn]] void abortStuckWrite(const std::string& message) const;
  void openResults();
  void openJsonl();
  void printBanner();
  bool afterRound(const RoundSummary& summary);
  void saveCheckpoint(int next, std::int64_t partialKept, std::int64_t partialSize, std::int64_t partialCrc,
                      const char* what = "checkpoint");
  int reportStop() const;
  int finish();

  const ExperimentConfig& cfg_;
  const Communicator& comm_;
  const FaultInjection faults_;
  Console console_;
  // From here on SIGTERM/SIGUSR1 only set a flag; the run stops at the end of the current round.
  StopSignals signals_;
  Timer total_;
  const OutputFiles files_;
  const std::string ckptPath_, partialPath_;
  // Declared before the files so that it is released after they are closed (and the partial file of
  // a failed run removed).
  OutputLock lock_;
  bool ownsOutput_ = false;  // every rank: rank 0 holds the lock, the output's files are this run's
  const std::string* writing_ = &partialPath_;  // see fileBeingWritten()
  // Ends a collective write phase that a full disk has stuck inside parallel HDF5. Rank 0 waits
  // kStuckWritePatience (a test's FEDSILO_FAULT patience instead, when set), the others
  // kRankReportDelay longer, so that rank 0 reports it when every rank is stuck.
  StorageWatchdog watchdog_{faults_.plan().watchdogPatience(kStuckWritePatience) +
                                (comm_.isRoot() ? std::chrono::seconds(0) : kRankReportDelay),
                            [this](const std::string& message) { abortStuckWrite(message); }};
  std::int64_t dataCrc_ = -1, partitionCrc_ = -1;  // the input fingerprint (app/input_fingerprint.hpp)
  const Placement countPlacement_;  // the placement a checkpoint is opened with, before the experiment's exists
  bool resume_ = false, reopen_ = false;
  CheckpointInfo resumed_;
  std::unique_ptr<Checkpoint> from_;
  std::unique_ptr<ResultsWriter> writer_;
  std::unique_ptr<Experiment> exp_;
  std::unique_ptr<RoundRecorder> recorder_;
  std::optional<FaultySink> faultySink_;
  std::unique_ptr<JsonlStream> jsonl_;  // rank 0, output.jsonl
  std::vector<double> roundSeconds_;    // every finished round's, rounds before a resume included (the ETA)
  int stoppedBy_ = 0, stoppedAt_ = 0;
};

// The start-up checks, in an order that touches nothing of the output before its lock is held:
// names and folder (the lock file lives there), the lock, then the checkpoint (checked before any
// data is loaded, so a mismatch fails fast), the experiment (data, partition, model, algorithm) and
// the restore from the checkpoint (which verifies its checksums). Returns false when --resume finds
// the run finished: nothing is to be done.
bool RunControl::startUp(FolderMode folders) {
  prepareOutputFolder(cfg_.output.path, comm_, folders);
  lock_ = lockOutput(cfg_.output.path, comm_, folders);
  if (!lock_.warning().empty()) console_.warning(lock_.warning());  // a file system without locks
  ownsOutput_ = comm_.allreduceMax<int>(lock_.held() ? 1 : 0) == 1;
  if (!findCheckpoint()) return false;
  if (resume_) openCheckpoint();  // before loading any data: a mismatch fails fast
  agreeKernelSet(comm_);
  agreePrecision(comm_, cfg_.train.precision);
  exp_ = std::make_unique<Experiment>(cfg_, comm_, faults_, console_);
  recorder_ = std::make_unique<RoundRecorder>(comm_, exp_->placement());
  dataCrc_ = dataFingerprint(exp_->data());
  partitionCrc_ = partitionFingerprint(exp_->clients());
  if (from_) restoreFromCheckpoint();
  return true;
}

int RunControl::run() {
  if (!startUp(FolderMode::Create)) return 0;
  releaseKeptPartial();
  openResults();
  openJsonl();
  printBanner();
  // The experiment writes through the recorder (under the io and stall faults, through the faulty
  // sink first), each record a watched write phase.
  RecordSink* sink = recorder_.get();
  const FaultPlan::Kind fault = faults_.plan().kind;
  if (fault == FaultPlan::Kind::Io || fault == FaultPlan::Kind::Stall)
    sink = &faultySink_.emplace(*recorder_, faults_.plan(), comm_.rank());
  WatchedSink watched(*sink, watchdog_, "writing the results file", partialPath_);
  exp_->run(watched, [this](const RoundSummary& summary) { return afterRound(summary); });
  if (stoppedBy_ != 0) return reportStop();
  exp_->writeFinal(watched);
  return finish();
}

// The real run's start-up without its side effects: missing folders are not created, the lock is
// released at once, and nothing is trained or written.
int RunControl::dryRun() {
  const bool willRun = startUp(FolderMode::CheckOnly);
  lock_.release();
  if (!willRun) return 0;
  console_.say(fmt("# dry run: start-up checks passed: ", cfg_.output.path, " can be written by this run alone; data, "
                   "partition and model (", counted(exp_->context().numParams, "parameter"), ") set up for ",
                   counted(cfg_.clients, "client"), resume_ ? fmt("; checkpoint ", ckptPath_, " verified") : ""));
  return 0;
}

// Finds the checkpoint and decides what becomes of a finished results file at the output (a
// ConfigError when this run may not replace it). Returns false when the run is finished already.
bool RunControl::findCheckpoint() {
  const bool haveCkpt = existsOnRoot(ckptPath_, comm_);
  const bool haveResults = existsOnRoot(files_.results, comm_);
  OutputStart start = OutputStart::Run;
  coordinated(comm_, [&] {
    start = checkFinishedResults(files_.results, ckptPath_, haveResults, haveCkpt, cfg_.checkpoint.resume,
                                 cfg_.output.overwrite);
  });
  if (start == OutputStart::Finished) {
    console_.say(finishedRunNote(files_.results, ckptPath_));
    return false;
  }
  if (haveResults)
    console_.say(fmt("note: ", files_.results, " holds a finished run's results; this run replaces them when it ",
                     "completes (", cfg_.checkpoint.resume ? "resuming a run started with --overwrite" : "--overwrite",
                     "); until then the file stays as it is"));
  resume_ = cfg_.checkpoint.resume && haveCkpt;
  if (cfg_.checkpoint.resume && !haveCkpt)
    console_.say(fmt("--resume: no checkpoint ", ckptPath_, ", starting from round 0"));
  if (!cfg_.checkpoint.resume && haveCkpt)
    console_.say(fmt("note: ", ckptPath_, " exists but --resume was not given: starting from round 0 (the run "
                     "replaces it)"));
  return true;
}

void RunControl::openCheckpoint() {
  from_ = Checkpoint::open(ckptPath_, comm_, countPlacement_);
  ResumeCheck check;
  coordinated(comm_, [&] {
    check = checkResumable(from_->info().config, cfg_.resolvedIni, optionDefaults(), ckptPath_);
    checkRoundCounters(from_->info(), ckptPath_, cfg_.rounds);
  });
  for (const auto& [key, value] : check.predatedOptions)
    console_.say(fmt("note: ", ckptPath_, " predates option ", key, "; resuming with its default (", key, " = ", value,
                     ")"));
}

void RunControl::restoreFromCheckpoint() {
  // Every rank computed the same fingerprints from the same data: agreed on, printed once.
  coordinated(comm_, [&] { checkInputFingerprint(from_->info(), ckptPath_, dataCrc_, partitionCrc_); });
  from_->usePlacement(exp_->placement());
  exp_->checkpoint(*from_);
  recorder_->load(*from_, ckptPath_, from_->info().roundNames, static_cast<std::uint64_t>(from_->info().rows));
  resumed_ = from_->info();
  roundSeconds_ = recorder_->scalarColumn("seconds");
  from_.reset();  // collective close
  // The partial results are re-opened only if they were closed cleanly at exactly this checkpoint (a
  // stop on a signal) and are byte for byte as then; after a periodic checkpoint the run went on
  // writing them, so they are rebuilt from the checkpoint's rows, as when they are missing. Any other
  // difference is damage: refused, the checkpoint and the file left for the user to look at.
  if (resumed_.partialKept == 0) return;
  const PartialResultsCheck partial =
      checkPartialResults(partialPath_, resumed_.partialSize, resumed_.partialCrc, resumed_.rows, comm_);
  coordinated(comm_, [&] {
    if (partial.state == PartialResultsCheck::State::Damaged)
      throw RuntimeError(fmt("partial results ", partialPath_, " ", partial.problem, "; the checkpoint ", ckptPath_,
                             " is left as it is: remove ", partialPath_, " to rebuild the results from it"));
  });
  reopen_ = partial.state == PartialResultsCheck::State::Intact;
  if (!reopen_) console_.say(fmt("note: ", partialPath_, " ", partial.problem, ": rebuilding it from the checkpoint"));
}

// A resume that re-opens the partial results first replaces the checkpoint that recorded them as
// closed by one that does not: from now on this run changes them, and a resume after a hard kill
// must rebuild them instead of taking the change for damage. Written before the file is touched.
void RunControl::releaseKeptPartial() {
  if (reopen_)
    saveCheckpoint(resumed_.nextRound, 0, -1, -1, "checkpoint for the re-opened results");
}

// The files of this run that a failed run leaves behind: the partial results, a half-written
// checkpoint and the lock file; only when they are this run's (see abandonFiles).
void RunControl::removeRunFiles() const {
  if (!ownsOutput_) return;
  std::remove(files_.partial.c_str());
  std::remove(files_.checkpointTmp.c_str());
  std::remove(files_.lock.c_str());
}

// On the watchdog's thread, while the main thread is stuck inside parallel HDF5: report, remove this
// run's files (the last good checkpoint stays) and abort every rank. MPI_Abort from this thread is
// the one MPI call fedsilo makes off the main thread; it is the call made to end a job that cannot
// end itself.
void RunControl::abortStuckWrite(const std::string& message) const {
  std::fprintf(stderr, "fedsilo: error: %s\n", message.c_str());
  removeRunFiles();
  MpiEnvironment::abort(static_cast<int>(ExitCode::Storage));
}

// Creating the results file and writing its first records is a watched write phase: a full disk can
// stick parallel HDF5 here as anywhere.
void RunControl::openResults() {
  const StorageWatchdog::Watch watch(watchdog_, "creating the results file", partialPath_);
  coordinated(comm_, [&] {
    writer_ = std::make_unique<ResultsWriter>(cfg_.output.path, comm_, exp_->placement(), reopen_);
  });
  faults_.whileCreatingResults();
  writeRootAttributes(*writer_, cfg_, comm_);
  if (resume_) {
    if (reopen_) writer_->truncateRounds(static_cast<std::uint64_t>(resumed_.rows));
    exp_->writeClientTable(*writer_);  // this run's placement (the rank count may have changed)
    if (!reopen_) recorder_->replay(*writer_);
  }
  recorder_->setTarget(writer_.get());
}

// output.jsonl: rank 0 starts <output>.jsonl empty, or, resuming, with the checkpoint's rounds (which
// every rank helps gather). Inside a coordinated region: a file that cannot be written fails the run
// on every rank before the first round.
void RunControl::openJsonl() {
  if (!cfg_.output.jsonl) return;
  const std::vector<RoundSummary> done = recorder_->summaries(cfg_);
  coordinated(comm_, [&] {
    if (!comm_.isRoot()) return;
    std::string text;
    std::vector<double> seconds;
    for (const RoundSummary& s : done) {
      seconds.push_back(s.seconds);
      text += roundJson(s, etaSeconds(seconds, cfg_.rounds));
    }
    jsonl_ = std::make_unique<JsonlStream>(cfg_.output.path + ".jsonl");
    jsonl_->restart(text);
  });
}

void RunControl::printBanner() {
  console_.say(fmt("fedsilo ", FEDSILO_VERSION, ": ", cfg_.algorithm, " on ", nameOf(cfg_.data.dataset), ", model ",
                   nameOf(cfg_.model.name), " (", counted(exp_->context().numParams, "parameter"), "), ",
                   counted(cfg_.clients, "client"), " on ", counted(comm_.size(), "rank"), ", ",
                   counted(cfg_.rounds, "round")));
  console_.say(fmt("kernels: ", isaName(activeIsa()), " (the lowest set of all ranks; FEDSILO_ISA selects a lower one)"));
  if (resume_)
    console_.say(fmt("resuming from ", ckptPath_, " at round ", resumed_.nextRound, " (written at ",
                     counted(resumed_.numRanks, "rank"), "; results: ",
                     reopen_ ? "partial file re-opened" : "partial file rebuilt from the checkpoint", ")"));
  if (jsonl_) console_.say(fmt("round figures also in ", jsonl_->path(), " (one JSON object per round)"));
  const std::string privacy = exp_->privacyDescription();
  if (!privacy.empty()) console_.say(privacy);
  char header[160];
  std::snprintf(header, sizeof header, "%6s %10s %10s %10s %9s %9s %9s%s%s", "round", "global_acc", "client_acc", "worst10",
                "train_s", "round_s", "eta", cfg_.privacy.level != PrivacyLevel::None ? "    epsilon" : "",
                cfg_.system.enabled() ? "      sim_s   sim_time" : "");
  console_.say(header);
}

// After each round: the round line (and JSON Lines object), the test hooks, then a stop request
// (agreed by every rank) or a periodic checkpoint. Returns false to stop the run.
bool RunControl::afterRound(const RoundSummary& summary) {
  roundSeconds_.push_back(summary.seconds);
  const double eta = etaSeconds(roundSeconds_, cfg_.rounds);
  console_.say(roundLine(summary, eta, cfg_.privacy.level != PrivacyLevel::None, cfg_.system.enabled()));
  if (cfg_.output.jsonl) {
    if (jsonl_) writing_ = &jsonl_->path();
    coordinated(comm_, [&] {
      if (jsonl_) jsonl_->append(roundJson(summary, eta));
    });
    writing_ = &partialPath_;
  }
  faults_.afterRound(summary.round);
  const int next = summary.round + 1;
  if (next >= cfg_.rounds) return true;  // a stop request now changes nothing: the run is done
  // Every rank must stop after the same round: agree on the flag (a signal may reach some ranks only,
  // or reach them in different rounds).
  const int sig = comm_.allreduceMax<int>(StopSignals::pending());
  if (sig != 0) {
    // Close the partial results cleanly FIRST, then record in the checkpoint that it may be re-opened.
    {
      const StorageWatchdog::Watch watch(watchdog_, "closing the results file", partialPath_);
      writer_->closeKeepingPartial();
    }
    writer_.reset();
    saveCheckpoint(next, 1, fileSizeOnRoot(partialPath_, comm_), fileChecksumOnRoot(partialPath_, comm_));
    stoppedBy_ = sig;
    stoppedAt_ = next;
    return false;
  }
  if (cfg_.checkpoint.every > 0 && next % cfg_.checkpoint.every == 0) saveCheckpoint(next, 0, -1, -1);
  return true;
}

// Writes the checkpoint and says so in a line that starts with `what`.
void RunControl::saveCheckpoint(int next, std::int64_t partialKept, std::int64_t partialSize, std::int64_t partialCrc,
                                const char* what) {
  Timer timer;
  CheckpointInfo info;
  info.version = FEDSILO_VERSION;
  info.config = cfg_.resolvedIni;
  info.nextRound = next;
  info.rows = static_cast<std::int64_t>(recorder_->rows());
  info.partialKept = partialKept;
  info.partialSize = partialSize;
  info.partialCrc = partialCrc;
  info.numClients = cfg_.clients;
  info.numRanks = comm_.size();
  info.roundNames = recorder_->names();
  info.modelLayers = layerTableText(exp_->layerTable());
  info.dataCrc = dataCrc_;
  info.partitionCrc = partitionCrc_;
  writing_ = &files_.checkpointTmp;
  const StorageWatchdog::Watch watch(watchdog_, "writing the checkpoint", files_.checkpointTmp);
  std::unique_ptr<Checkpoint> checkpoint = Checkpoint::create(ckptPath_, comm_, exp_->placement(), info);
  exp_->checkpoint(*checkpoint);
  recorder_->save(*checkpoint);
  checkpoint->commit();
  writing_ = &partialPath_;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f", timer.seconds());
  console_.say(fmt(what, " before round ", next, ": ", ckptPath_, " (", seconds, " s)"));
}

int RunControl::reportStop() const {
  if (comm_.isRoot()) {
    std::fprintf(stderr,
                 "fedsilo: interrupted by %s: stopped before round %d of %d; checkpoint %s, partial results %s; "
                 "run again with --resume to continue (exit code %d)\n",
                 StopSignals::name(stoppedBy_), stoppedAt_, cfg_.rounds, ckptPath_.c_str(), partialPath_.c_str(),
                 kExitInterrupted);
    std::fflush(stderr);
  }
  // Leave together (see main): the launcher may kill the other ranks once one exits non-zero.
  comm_.barrier();
  return kExitInterrupted;
}

int RunControl::finish() {
  if (cfg_.output.jsonl) {  // rank 0 writes it, every rank agrees on the outcome
    if (jsonl_) writing_ = &jsonl_->path();
    coordinated(comm_, [&] {
      if (jsonl_) jsonl_->close();
    });
    writing_ = &partialPath_;
  }
  {
    const StorageWatchdog::Watch watch(watchdog_, "closing the results file", partialPath_);
    writer_->commit();
  }
  if (comm_.isRoot()) {
    // The results file is complete: a checkpoint of this run (or a stale one) has no use any more. One
    // that cannot be removed is said: the run has succeeded, but a --resume would run again from it.
    for (const std::string& stale : {ckptPath_, files_.checkpointTmp})
      if (std::remove(stale.c_str()) != 0 && errno != ENOENT)
        console_.warning(fmt("the results are complete, but ", stale, " cannot be removed (", std::strerror(errno),
                             "); remove it, or a --resume runs again from it"));
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f", total_.seconds());
  console_.say(fmt("done in ", seconds, " s; results in ", cfg_.output.path));
  return 0;
}

}  // namespace

namespace {

int runControlled(const ExperimentConfig& cfg, const Communicator& comm, bool dry) {
  RunControl control(cfg, comm, faultPlanFromEnvironment());
  try {
    return dry ? control.dryRun() : control.run();
  } catch (const PeerFailure&) {
    control.closeCheckpoint();  // agreed: the reporting rank says what failed and how the run leaves
    throw;
  } catch (const Error& e) {
    // A write that failed for want of space, a quota, an I/O error: a storage failure (exit 74) that
    // names the system's reason and the file (asked before the partial file of this run is removed,
    // which frees its space).
    std::string storage = e.code() == ExitCode::Storage ? e.what() : "";
    if (dynamic_cast<const RuntimeError*>(&e) != nullptr)
      storage = storageFailureMessage(e.what(), control.fileBeingWritten());
    // HDF5 cannot close a file whose writes failed: its close writes the cached metadata again (in
    // parallel HDF5 waiting in collectives for a rank whose write fails again), and a file whose close
    // failed stays open until the library ends, which then crashes in H5F__close_cb. So a storage
    // failure is never left through the closes: the files are abandoned (removed) and main() aborts
    // every rank, even when every rank knows of the failure.
    const bool closeTogether = agreedFailure(e) && storage.empty();
    if (closeTogether) control.closeCheckpoint();
    else control.abandonFiles();
    if (storage.empty()) throw;
    StorageError failure(storage);
    if (closeTogether) failure.markAgreed();
    throw failure;
  } catch (...) {
    if (agreedFailure(std::current_exception()))
      control.closeCheckpoint();
    else
      control.abandonFiles();
    throw;
  }
}

}  // namespace

int runExperiment(const ExperimentConfig& cfg, const Communicator& comm) { return runControlled(cfg, comm, false); }

int dryRunExperiment(const ExperimentConfig& cfg, const Communicator& comm) { return runControlled(cfg, comm, true); }

}  // namespace fedsilo
