#include "app/run_control.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "app/fault_injection.hpp"
#include "app/output_paths.hpp"
#include "app/round_recorder.hpp"
#include "app/signals.hpp"
#include "core/timer.hpp"
#include "fl/experiment.hpp"
#include "io/checkpoint.hpp"
#include "io/results_writer.hpp"
#include "io/storage_errors.hpp"

namespace fedsilo {

namespace {

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

// The resolved configuration as section.key -> value, without the keys a resumed run may change:
// the output path (the checkpoint was found through it anyway) and how often to checkpoint.
std::map<std::string, std::string> resumeRelevant(const std::string& ini) {
  std::map<std::string, std::string> out;
  std::istringstream in(ini);
  std::string line, section;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      section = line.substr(1, line.find(']') - 1);
      continue;
    }
    const auto eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    const std::string key = (section.empty() ? "" : section + ".") + line.substr(0, eq);
    if (key == "output" || key == "checkpoint.every") continue;
    out[key] = line.substr(eq + 3);
  }
  return out;
}

void checkResumable(const std::string& saved, const std::string& now, const std::string& path) {
  const auto a = resumeRelevant(saved), b = resumeRelevant(now);
  if (a == b) return;
  for (const auto& [k, v] : a) {
    const auto it = b.find(k);
    const std::string mine = it == b.end() ? "(not set)" : it->second;
    if (mine != v)
      throw ConfigError(fmt("--resume: ", path, " was written with ", k, " = ", v, ", this run has ", k, " = ", mine,
                            "; resume with the same configuration, or remove the checkpoint to start over"));
  }
  for (const auto& [k, v] : b)
    if (!a.count(k))
      throw ConfigError(fmt("--resume: ", path, " was written without option ", k, " (this run has ", k, " = ", v,
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
// the checkpoint to resume from, build the experiment and restore it, open the results file, run the
// rounds (a progress line each, periodic checkpoints, stop requests agreed by every rank), then the
// final records or the stop. dryRun() makes the same start-up steps and stops before the results file.
class RunControl {
 public:
  RunControl(const ExperimentConfig& cfg, const Communicator& comm, const FaultPlan& faults)
      : cfg_(cfg), comm_(comm), faults_(faults, comm.rank()), files_(cfg.output.path),
        ckptPath_(checkpointPath(cfg.output.path)), partialPath_(files_.partial),
        countPlacement_(cfg.clients, comm.size()) {}

  int run();
  int dryRun();
  // After a failure only this rank saw (outside a coordinated region): the other ranks may be blocked
  // in a collective HDF5 call, and closing these files is collective too, so closing would hang.
  // Abandon them and remove the partial results file, a half-written checkpoint and the lock file,
  // but only when they are this run's (it holds the output's lock); main() then aborts every rank.
  // Rank 0 keeps its lock on the removed lock file until it exits: a run that starts meanwhile makes
  // a new one, which the other ranks of this run cannot touch: each of their steps that names a file
  // (create, rename, remove) follows a collective call that cannot complete without this rank.
  void abandonFiles() {
    (void)writer_.release();
    (void)from_.release();
    if (ownsOutput_) {
      std::remove(files_.partial.c_str());
      std::remove(files_.checkpointTmp.c_str());
      std::remove(files_.lock.c_str());
    }
    lock_.holdUntilExit();
  }
  // After a failure every rank agreed on: close the resume checkpoint here, on every rank together
  // (a Checkpoint destroyed by unwinding abandons its file instead of closing it collectively).
  void closeCheckpoint() { from_.reset(); }

 private:
  void startUp(FolderMode folders);
  void findCheckpoint();
  void openCheckpoint();
  void restoreFromCheckpoint();
  void openResults();
  void printBanner() const;
  bool afterRound(const RoundSummary& summary);
  void saveCheckpoint(int next, std::int64_t partialKept, std::int64_t partialSize, std::int64_t partialCrc);
  int reportStop() const;
  int finish();

  const ExperimentConfig& cfg_;
  const Communicator& comm_;
  const FaultInjection faults_;
  // From here on SIGTERM/SIGUSR1 only set a flag; the run stops at the end of the current round.
  StopSignals signals_;
  Timer total_;
  const OutputFiles files_;
  const std::string ckptPath_, partialPath_;
  // Declared before the files so that it is released after they are closed (and the partial file of
  // a failed run removed).
  OutputLock lock_;
  bool ownsOutput_ = false;  // every rank: the lock was taken, the output's files are this run's
  const Placement countPlacement_;  // the placement a checkpoint is opened with, before the experiment's exists
  bool resume_ = false, reopen_ = false;
  CheckpointInfo resumed_;
  std::unique_ptr<Checkpoint> from_;
  std::unique_ptr<ResultsWriter> writer_;
  std::unique_ptr<Experiment> exp_;
  std::unique_ptr<RoundRecorder> recorder_;
  std::optional<FaultySink> faultySink_;
  int stoppedBy_ = 0, stoppedAt_ = 0;
};

// The start-up checks, in an order that touches nothing of the output before its lock is held:
// names and folder (the lock file lives there), the lock, then the checkpoint (checked before any
// data is loaded, so a mismatch fails fast), the experiment (data, partition, model, algorithm) and
// the restore from the checkpoint (which verifies its checksums).
void RunControl::startUp(FolderMode folders) {
  prepareOutputFolder(cfg_.output.path, comm_, folders);
  lock_ = lockOutput(cfg_.output.path, comm_, folders);
  ownsOutput_ = true;
  findCheckpoint();
  if (resume_) openCheckpoint();
  exp_ = std::make_unique<Experiment>(cfg_, comm_, faults_);
  recorder_ = std::make_unique<RoundRecorder>(comm_, exp_->placement());
  if (from_) restoreFromCheckpoint();
}

int RunControl::run() {
  startUp(FolderMode::Create);
  openResults();
  printBanner();
  // The experiment writes through the recorder; under the io fault, through the faulty sink first.
  RecordSink* sink = recorder_.get();
  if (faults_.plan().kind == FaultPlan::Kind::Io) sink = &faultySink_.emplace(*recorder_, faults_.plan(), comm_.rank());
  exp_->run(*sink, [this](const RoundSummary& summary) { return afterRound(summary); });
  if (stoppedBy_ != 0) return reportStop();
  exp_->writeFinal(*sink);
  return finish();
}

// The real run's start-up without its side effects: missing folders are not created, the lock is
// released at once, and nothing is trained or written.
int RunControl::dryRun() {
  startUp(FolderMode::CheckOnly);
  lock_.release();
  if (comm_.isRoot()) {
    std::printf("# dry run: start-up checks passed: %s can be written by this run alone; data, partition and model "
                "(%lld parameters) set up for %d clients%s\n",
                cfg_.output.path.c_str(), static_cast<long long>(exp_->context().numParams), cfg_.clients,
                resume_ ? fmt("; checkpoint ", ckptPath_, " verified").c_str() : "");
    std::fflush(stdout);
  }
  return 0;
}

void RunControl::findCheckpoint() {
  const bool haveCkpt = existsOnRoot(ckptPath_, comm_);
  resume_ = cfg_.checkpoint.resume && haveCkpt;
  if (comm_.isRoot() && cfg_.checkpoint.resume && !haveCkpt)
    std::printf("--resume: no checkpoint %s, starting from round 0\n", ckptPath_.c_str());
  if (comm_.isRoot() && !cfg_.checkpoint.resume && haveCkpt)
    std::printf("note: %s exists but --resume was not given: starting from round 0 (the run replaces it)\n",
                ckptPath_.c_str());
}

void RunControl::openCheckpoint() {
  from_ = Checkpoint::open(ckptPath_, comm_, countPlacement_);
  coordinated(comm_, [&] {
    checkResumable(from_->info().config, cfg_.resolvedIni, ckptPath_);
    checkRoundCounters(from_->info(), ckptPath_, cfg_.rounds);
  });
}

void RunControl::restoreFromCheckpoint() {
  from_->usePlacement(exp_->placement());
  exp_->checkpoint(*from_);
  recorder_->load(*from_, ckptPath_, from_->info().roundNames, static_cast<std::uint64_t>(from_->info().rows));
  resumed_ = from_->info();
  from_.reset();  // collective close
  // Re-open the partial results only if it was closed cleanly at exactly this checkpoint (a stop on a
  // signal) and has not changed since (size and checksum); after a periodic checkpoint the run went on
  // writing it, so rebuild it instead, as when it changed (a resumed run that was killed, damage).
  if (resumed_.partialKept == 0) return;
  const std::string problem =
      partialResultsProblem(partialPath_, resumed_.partialSize, resumed_.partialCrc, resumed_.rows, comm_);
  reopen_ = problem.empty();
  if (!reopen_ && comm_.isRoot())
    std::printf("note: %s %s: rebuilding it from the checkpoint\n", partialPath_.c_str(), problem.c_str());
}

void RunControl::openResults() {
  coordinated(comm_, [&] {
    writer_ = std::make_unique<ResultsWriter>(cfg_.output.path, comm_, exp_->placement(), reopen_);
  });
  writeRootAttributes(*writer_, cfg_, comm_);
  if (resume_) {
    if (reopen_) writer_->truncateRounds(static_cast<std::uint64_t>(resumed_.rows));
    exp_->writeClientTable(*writer_);  // this run's placement (the rank count may have changed)
    if (!reopen_) recorder_->replay(*writer_);
  }
  recorder_->setTarget(writer_.get());
}

void RunControl::printBanner() const {
  if (!comm_.isRoot()) return;
  std::printf("fedsilo %s: %s on %s, model %s (%lld parameters), %d clients on %d ranks, %d rounds\n", FEDSILO_VERSION,
              cfg_.algorithm.c_str(), nameOf(cfg_.data.dataset), nameOf(cfg_.model.name),
              static_cast<long long>(exp_->context().numParams), cfg_.clients, comm_.size(), cfg_.rounds);
  if (resume_)
    std::printf("resuming from %s at round %lld (written at %lld ranks; results: %s)\n", ckptPath_.c_str(),
                static_cast<long long>(resumed_.nextRound), static_cast<long long>(resumed_.numRanks),
                reopen_ ? "partial file re-opened" : "partial file rebuilt from the checkpoint");
  std::printf("%6s %10s %10s %10s %9s %9s\n", "round", "global_acc", "client_acc", "worst10", "train_s", "round_s");
  std::fflush(stdout);
}

// After each round: the progress line, the test hooks, then a stop request (agreed by every rank) or
// a periodic checkpoint. Returns false to stop the run.
bool RunControl::afterRound(const RoundSummary& summary) {
  if (comm_.isRoot()) {
    std::printf("%6d %10s %10s %10s %9.3f %9.3f\n", summary.round,
                fmtAcc(summary.globalAccuracy, summary.evaluated).c_str(),
                fmtAcc(summary.meanClientAccuracy, summary.evaluated).c_str(),
                fmtAcc(summary.worst10, summary.evaluated).c_str(), summary.trainSeconds, summary.seconds);
    std::fflush(stdout);
  }
  faults_.afterRound(summary.round);
  const int next = summary.round + 1;
  if (next >= cfg_.rounds) return true;  // a stop request now changes nothing: the run is done
  // Every rank must stop after the same round: agree on the flag (a signal may reach some ranks only,
  // or reach them in different rounds).
  const int sig = comm_.allreduceMax<int>(StopSignals::pending());
  if (sig != 0) {
    // Close the partial results cleanly FIRST, then record in the checkpoint that it may be re-opened.
    writer_->closeKeepingPartial();
    writer_.reset();
    saveCheckpoint(next, 1, fileSizeOnRoot(partialPath_, comm_), fileChecksumOnRoot(partialPath_, comm_));
    stoppedBy_ = sig;
    stoppedAt_ = next;
    return false;
  }
  if (cfg_.checkpoint.every > 0 && next % cfg_.checkpoint.every == 0) saveCheckpoint(next, 0, -1, -1);
  return true;
}

void RunControl::saveCheckpoint(int next, std::int64_t partialKept, std::int64_t partialSize,
                                std::int64_t partialCrc) {
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
  std::unique_ptr<Checkpoint> checkpoint = Checkpoint::create(ckptPath_, comm_, exp_->placement(), info);
  exp_->checkpoint(*checkpoint);
  recorder_->save(*checkpoint);
  checkpoint->commit();
  if (comm_.isRoot()) {
    std::printf("checkpoint before round %d: %s (%.2f s)\n", next, ckptPath_.c_str(), timer.seconds());
    std::fflush(stdout);
  }
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
  writer_->commit();
  if (comm_.isRoot()) {
    // The results file is complete: a checkpoint of this run (or a stale one) has no use any more.
    std::remove(ckptPath_.c_str());
    std::remove((ckptPath_ + ".tmp").c_str());
    std::printf("done in %.2f s; results in %s\n", total_.seconds(), cfg_.output.path.c_str());
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

namespace {

int runControlled(const ExperimentConfig& cfg, const Communicator& comm, bool dry) {
  RunControl control(cfg, comm, faultPlanFromEnvironment());
  try {
    return dry ? control.dryRun() : control.run();
  } catch (const RuntimeError& e) {
    // A write that failed for want of space or permission: say so when the message does not (asked
    // before the partial file of this run is removed, which frees its space).
    const std::string message = withStorageProblem(e.what(), cfg.output.path);
    const bool agreed = agreedFailure(e);
    if (agreed) control.closeCheckpoint();
    else control.abandonFiles();
    if (message == e.what()) throw;
    RuntimeError withReason(message);
    if (agreed) withReason.markAgreed();
    throw withReason;
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
