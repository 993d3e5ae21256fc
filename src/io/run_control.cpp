#include "io/run_control.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "core/timer.hpp"
#include "fl/experiment.hpp"
#include "io/checkpoint.hpp"
#include "io/fault_injection.hpp"

#include <chrono>
#include <thread>
#include "io/results_writer.hpp"
#include "io/signals.hpp"

namespace fedsilo {

namespace {

void writeRootAttributes(ResultsWriter& w, const ExperimentConfig& cfg, const Communicator& comm) {
  w.writeRootAttribute("format", std::string("fedsilo-results-1"));
  w.writeRootAttribute("version", std::string(FEDSILO_VERSION));
  w.writeRootAttribute("config", cfg.resolvedIni);
  w.writeRootAttribute("algorithm", cfg.algorithm);
  w.writeRootAttribute("dataset", cfg.data.dataset);
  w.writeRootAttribute("model", cfg.model.name);
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

// Forwards every record to the results file and keeps the /rounds rows, which go into every
// checkpoint: a resume after a hard kill (the partial file was open, and may be damaged) rebuilds
// the partial file from them. Also the one place the test-only io fault is injected.
class RoundRecorder final : public RecordSink {
 public:
  RoundRecorder(const Communicator& comm, const Placement& placement, const FaultPlan& fault)
      : comm_(comm), placement_(placement), fault_(fault) {}
  void setTarget(RecordSink* out) { out_ = out; }
  std::uint64_t rows() const { return rows_; }

  void appendRoundScalar(const std::string& name, double value) override {
    note('s', name);
    scalars_[name].push_back(value);
    out_->appendRoundScalar(name, value);
  }
  void appendRoundInt(const std::string& name, std::int64_t value) override {
    if (name == "round") round_ = static_cast<int>(value);
    note('i', name);
    scalars_[name].push_back(static_cast<double>(value));  // exact: round indices are far below 2^53
    out_->appendRoundInt(name, value);
  }
  void appendRoundClients(const std::string& name, const std::vector<double>& local) override {
    if (fault_.on(FaultPlan::Kind::Io, comm_.rank()) && round_ >= fault_.round)
      throw RuntimeError(fmt("HDF5: write /rounds/", name, " failed (injected on rank ", comm_.rank(), " in round ",
                             round_, " by FEDSILO_FAULT)"));
    note('c', name);
    clients_[name].push_back(local);
    out_->appendRoundClients(name, local);
  }
  void endRound() override {
    ++rows_;
    out_->endRound();
  }
  void writeScalar(const std::string& p, double v) override { out_->writeScalar(p, v); }
  void writeIntScalar(const std::string& p, std::int64_t v) override { out_->writeIntScalar(p, v); }
  void writeArray(const std::string& p, const std::vector<double>& v, const std::vector<std::uint64_t>& d) override {
    out_->writeArray(p, v, d);
  }
  void writeIntArray(const std::string& p, const std::vector<std::int64_t>& v, const std::vector<std::uint64_t>& d) override {
    out_->writeIntArray(p, v, d);
  }
  void writeFloatArray(const std::string& p, const std::vector<float>& v, const std::vector<std::uint64_t>& d) override {
    out_->writeFloatArray(p, v, d);
  }
  void writeStrings(const std::string& p, const std::vector<std::string>& v) override { out_->writeStrings(p, v); }
  void writeClientRows(const std::string& p, const std::vector<double>& v, std::uint64_t w) override {
    out_->writeClientRows(p, v, w);
  }
  void writeClientMatrix(const std::string& p, const std::vector<double>& v, std::uint64_t w) override {
    out_->writeClientMatrix(p, v, w);
  }
  void writeClientIntRows(const std::string& p, const std::vector<std::int64_t>& v, std::uint64_t w) override {
    out_->writeClientIntRows(p, v, w);
  }
  void writeClientFloatRows(const std::string& p, const std::vector<float>& v, std::uint64_t w) override {
    out_->writeClientFloatRows(p, v, w);
  }
  void writeStringAttribute(const std::string& p, const std::string& n, const std::string& v) override {
    out_->writeStringAttribute(p, n, v);
  }

  // "s:name" (replicated scalar), "i:name" (replicated integer) and "c:name" (client row) lines, in
  // first-append order.
  std::string names() const {
    std::string s;
    for (const auto& [kind, name] : order_) s += std::string(1, kind) + ":" + name + "\n";
    return s;
  }

  void save(StateArchive& ar) {
    const int first = placement_.first(comm_.rank()), mine = placement_.count(comm_.rank());
    for (const auto& [kind, name] : order_) {
      if (kind != 'c') {
        ar.doubles("rounds/" + name, scalars_.at(name));
        continue;
      }
      const auto& rows = clients_.at(name);
      std::unordered_map<int, std::vector<double>> m;
      for (int i = 0; i < mine; ++i) {
        std::vector<double>& v = m[first + i];
        for (const auto& row : rows) v.push_back(row.at(static_cast<std::size_t>(i)));
      }
      ar.clientDoubles("rounds/" + name, m);
    }
  }

  void load(StateArchive& ar, const std::string& file, const std::string& names, std::uint64_t rows) {
    const int first = placement_.first(comm_.rank()), mine = placement_.count(comm_.rank());
    std::istringstream in(names);
    std::string line;
    while (std::getline(in, line)) {
      if (line.size() < 3 || line[1] != ':') continue;
      const char kind = line[0];
      const std::string name = line.substr(2);
      order_.emplace_back(kind, name);
      if (kind != 'c') {
        std::vector<double>& v = scalars_[name];
        ar.doubles("rounds/" + name, v);
        if (v.size() != rows)
          throw RuntimeError(fmt("checkpoint ", file, ": array rounds/", name, " has ", v.size(), " rows, expected ", rows));
        continue;
      }
      std::unordered_map<int, std::vector<double>> m;
      ar.clientDoubles("rounds/" + name, m);
      auto& out = clients_[name];
      out.assign(rows, std::vector<double>(static_cast<std::size_t>(mine), 0.0));
      for (int i = 0; i < mine; ++i) {
        const auto it = m.find(first + i);
        if (it == m.end() || it->second.size() != rows)
          throw RuntimeError(fmt("checkpoint ", file, ": array rounds/", name, " lacks ", rows, " rows of client ", first + i));
        for (std::uint64_t t = 0; t < rows; ++t) out[t][static_cast<std::size_t>(i)] = it->second[t];
      }
    }
    rows_ = rows;
  }

  // Writes the kept rows to `out` (a fresh results file), as the original run appended them.
  void replay(RecordSink& out) const {
    for (std::uint64_t t = 0; t < rows_; ++t) {
      for (const auto& [kind, name] : order_) {
        if (kind == 's') out.appendRoundScalar(name, scalars_.at(name).at(t));
        else if (kind == 'i') out.appendRoundInt(name, static_cast<std::int64_t>(scalars_.at(name).at(t)));
        else out.appendRoundClients(name, clients_.at(name).at(t));
      }
      out.endRound();
    }
  }

 private:
  void note(char kind, const std::string& name) {
    for (const auto& o : order_)
      if (o.second == name) return;
    order_.emplace_back(kind, name);
  }

  const Communicator& comm_;
  const Placement& placement_;
  const FaultPlan& fault_;
  RecordSink* out_ = nullptr;
  std::uint64_t rows_ = 0;
  int round_ = -1;
  std::vector<std::pair<char, std::string>> order_;
  std::map<std::string, std::vector<double>> scalars_;
  std::map<std::string, std::vector<std::vector<double>>> clients_;  // name -> rows of local values
};

}  // namespace

int runExperiment(const ExperimentConfig& original, const Communicator& comm) {
  Timer total;
  const FaultPlan fault = faultPlanFromEnvironment();
  // A copy that the test-only fault injection may change on one rank. Experiment keeps a reference
  // to it, so a change between rounds (the nan fault's learning rate) reaches the trainer.
  ExperimentConfig cfg = original;
  if (fault.on(FaultPlan::Kind::Data, comm.rank())) {
    cfg.data.dir = "/nonexistent/fedsilo-fault-injection";
    if (!cfg.data.file.empty()) cfg.data.file = cfg.data.dir + "/data";
  }
  const double faultLr = fault.divergentLr(comm.rank());
  if (faultLr != 0.0 && fault.round <= 0) cfg.train.lr = faultLr;

  // From here on SIGTERM/SIGUSR1 only set a flag; the run stops at the end of the current round.
  StopSignals signals;
  const std::string ckptPath = checkpointPath(cfg.output.path);
  const std::string partialPath = cfg.output.path + ".partial";
  const bool haveCkpt = existsOnRoot(ckptPath, comm);
  const bool resume = cfg.checkpoint.resume && haveCkpt;
  if (comm.isRoot() && cfg.checkpoint.resume && !haveCkpt)
    std::printf("--resume: no checkpoint %s, starting from round 0\n", ckptPath.c_str());
  if (comm.isRoot() && !cfg.checkpoint.resume && haveCkpt)
    std::printf("note: %s exists but --resume was not given: starting from round 0 (the run replaces it)\n",
                ckptPath.c_str());

  const Placement placement(cfg.clients, comm.size());
  std::unique_ptr<Checkpoint> from;
  std::unique_ptr<ResultsWriter> writer;
  try {
    if (resume) {
      from = Checkpoint::open(ckptPath, comm, placement);
      // Before loading any data: a mismatch fails fast.
      coordinated(comm, [&] {
        checkResumable(from->info().config, cfg.resolvedIni, ckptPath);
        // One results row per finished round: counters that disagree were not written by fedsilo
        // (or were edited), and resuming from them would mix rounds.
        if (from->info().rows != from->info().nextRound)
          throw RuntimeError(fmt("checkpoint ", ckptPath, ": next_round = ", from->info().nextRound, " and rows = ",
                                 from->info().rows, " disagree (one results row per finished round)"));
        if (from->info().nextRound > cfg.rounds)
          throw RuntimeError(fmt("checkpoint ", ckptPath, ": next_round = ", from->info().nextRound,
                                 " is past the configuration's rounds = ", cfg.rounds));
      });
    }
    Experiment exp(cfg, comm);
    if (from) from->usePlacement(exp.placement());
    RoundRecorder recorder(comm, exp.placement(), fault);
    bool reopen = false;
    CheckpointInfo resumed;
    if (from) {
      exp.checkpoint(*from);
      recorder.load(*from, ckptPath, from->info().roundNames, static_cast<std::uint64_t>(from->info().rows));
      resumed = from->info();
      from.reset();  // collective close
      // Re-open the partial results only if it was closed cleanly at exactly this checkpoint (a stop
      // on a signal); after a periodic checkpoint the run went on writing it, so rebuild it instead.
      reopen = resumed.partialKept != 0 && partialResultsIntact(partialPath, resumed.partialSize, resumed.rows, comm);
    }
    coordinated(comm, [&] { writer = std::make_unique<ResultsWriter>(cfg.output.path, comm, exp.placement(), reopen); });
    writeRootAttributes(*writer, cfg, comm);
    if (resume) {
      if (reopen) writer->truncateRounds(static_cast<std::uint64_t>(resumed.rows));
      exp.writeClientTable(*writer);  // this run's placement (the rank count may have changed)
      if (!reopen) recorder.replay(*writer);
    }
    recorder.setTarget(writer.get());

    if (comm.isRoot()) {
      std::printf("fedsilo %s: %s on %s, model %s (%lld parameters), %d clients on %d ranks, %d rounds\n", FEDSILO_VERSION,
                  cfg.algorithm.c_str(), cfg.data.dataset.c_str(), cfg.model.name.c_str(),
                  static_cast<long long>(exp.context().numParams), cfg.clients, comm.size(), cfg.rounds);
      if (resume)
        std::printf("resuming from %s at round %lld (written at %lld ranks; results: %s)\n", ckptPath.c_str(),
                    static_cast<long long>(resumed.nextRound), static_cast<long long>(resumed.numRanks),
                    reopen ? "partial file re-opened" : "partial file rebuilt from the checkpoint");
      std::printf("%6s %10s %10s %10s %9s %9s\n", "round", "global_acc", "client_acc", "worst10", "train_s", "round_s");
      std::fflush(stdout);
    }

    auto saveCheckpoint = [&](int next, std::int64_t partialKept, std::int64_t partialSize) {
      Timer t;
      CheckpointInfo info;
      info.version = FEDSILO_VERSION;
      info.config = cfg.resolvedIni;
      info.nextRound = next;
      info.rows = static_cast<std::int64_t>(recorder.rows());
      info.partialKept = partialKept;
      info.partialSize = partialSize;
      info.numClients = cfg.clients;
      info.numRanks = comm.size();
      info.roundNames = recorder.names();
      std::unique_ptr<Checkpoint> ck = Checkpoint::create(ckptPath, comm, exp.placement(), info);
      exp.checkpoint(*ck);
      recorder.save(*ck);
      ck->commit();
      if (comm.isRoot()) {
        std::printf("checkpoint before round %d: %s (%.2f s)\n", next, ckptPath.c_str(), t.seconds());
        std::fflush(stdout);
      }
    };

    int stoppedBy = 0, stoppedAt = 0;
    exp.run(recorder, [&](const RoundSummary& rs) {
      if (comm.isRoot()) {  // one line per round
        std::printf("%6d %10s %10s %10s %9.3f %9.3f\n", rs.round, fmtAcc(rs.globalAccuracy, rs.evaluated).c_str(),
                    fmtAcc(rs.meanClientAccuracy, rs.evaluated).c_str(), fmtAcc(rs.worst10, rs.evaluated).c_str(),
                    rs.trainSeconds, rs.seconds);
        std::fflush(stdout);
      }
      const int next = rs.round + 1;
      if (faultLr != 0.0 && next == fault.round) cfg.train.lr = faultLr;
      if (fault.kind == FaultPlan::Kind::Slow && fault.ms > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(fault.ms));
      if (next >= cfg.rounds) return true;  // a stop request now changes nothing: the run is done
      // Every rank must stop after the same round: agree on the flag (a signal may reach some ranks
      // only, or reach them in different rounds).
      const int sig = comm.allreduceMax<int>(StopSignals::pending());
      if (sig != 0) {
        // Close the partial results cleanly FIRST, then record in the checkpoint that it may be re-opened.
        writer->closeKeepingPartial();
        writer.reset();
        saveCheckpoint(next, 1, fileSizeOnRoot(partialPath, comm));
        stoppedBy = sig;
        stoppedAt = next;
        return false;
      }
      if (cfg.checkpoint.every > 0 && next % cfg.checkpoint.every == 0) saveCheckpoint(next, 0, -1);
      return true;
    });

    if (stoppedBy != 0) {
      if (comm.isRoot()) {
        std::fprintf(stderr,
                     "fedsilo: interrupted by %s: stopped before round %d of %d; checkpoint %s, partial results %s; "
                     "run again with --resume to continue (exit code %d)\n",
                     StopSignals::name(stoppedBy), stoppedAt, cfg.rounds, ckptPath.c_str(), partialPath.c_str(),
                     kExitInterrupted);
        std::fflush(stderr);
      }
      // Leave together (see main): the launcher may kill the other ranks once one exits non-zero.
      comm.barrier();
      return kExitInterrupted;
    }
    exp.writeFinal(recorder);
    writer->commit();
    if (comm.isRoot()) {
      // The results file is complete: a checkpoint of this run (or a stale one) has no use any more.
      std::remove(ckptPath.c_str());
      std::remove((ckptPath + ".tmp").c_str());
      std::printf("done in %.2f s; results in %s\n", total.seconds(), cfg.output.path.c_str());
      std::fflush(stdout);
    }
    return 0;
  } catch (...) {
    if (!agreedFailure(std::current_exception())) {
      // Only this rank failed, outside a coordinated region: the other ranks may be blocked in a
      // collective HDF5 call, and closing these files is collective too, so closing would hang.
      // Abandon them; main() removes the partial file and aborts every rank.
      (void)writer.release();
      (void)from.release();
    }
    from.reset();  // agreed: every rank closes it here, together (a Checkpoint never closes while unwinding)
    throw;
  }
}

}  // namespace fedsilo
