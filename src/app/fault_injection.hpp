// TEST-ONLY fault injection, read from the environment variable FEDSILO_FAULT in this one place
// (used by app/run_control, and by app/run_main for report_delay_ms). It exists so that
// tests/integration/test_failures.sh can make ONE rank fail in each way a real run can fail, and
// check that every rank exits promptly with one error line and no results file. Not a user feature:
// undocumented in --help, see docs/hpc.md. It acts only through the round driver's hooks
// (FaultInjection, a RunHooks), a sink decorator in front of the results file (FaultySink) and the
// two waits its patience and report_delay_ms keys shorten; the configuration the experiment reads is
// never changed.
//
//   FEDSILO_FAULT=data:rank=R           rank R reads its data from a directory that does not exist
//                                       (the loader's own DataError, exit 3, on that rank only)
//   FEDSILO_FAULT=nan:rank=R,round=T    from round T on, rank R trains with lr = 1e30, so its
//                                       clients' losses become NaN/Inf in the real trainer
//                                       (NumericError naming client and round, exit 1; with
//                                       fl.skip_diverged = true their updates are dropped instead)
//   FEDSILO_FAULT=inf:rank=R,round=T    from round T on, rank R trains with lr = +Inf: each step's
//                                       loss is finite (computed before the step) but the step makes
//                                       the parameters Inf/NaN, so with one step per round training
//                                       ENDS with a diverged model and a finite loss, and only the
//                                       driver's parameter checks can see it (fl.skip_diverged drops
//                                       the update and undoes the client's personal state)
//   FEDSILO_FAULT=io:rank=R,round=T     rank R fails while appending round T's rows to the results
//                                       file, outside any coordinated region, as an HDF5 error on
//                                       one rank would (main removes the partial file and aborts)
//   FEDSILO_FAULT=slow:rank=R,ms=M      every rank pauses M ms after each round (rank is ignored; all
//                                       ranks must agree), so that tests/integration/test_resume.sh
//                                       can deliver its signal mid-run even when rounds take 1 ms
//   FEDSILO_FAULT=stall:rank=R,round=T  rank R blocks for good while it writes round T's rows to the
//                                       results file (round=-1: while it creates the results file),
//                                       as a write stuck inside parallel HDF5 would: only the storage
//                                       watchdog can end the run (tests/integration/test_stuck_writes.sh)
//   ...,patience=S                      with any of the above: the storage watchdog ends a stuck write
//                                       phase after S s on rank 0 (S + 3 s on the others) instead of
//                                       10 s, so that test_stuck_writes need not wait out the default
//   ...,report_delay_ms=M               with any of the above: a rank other than 0 that fails alone,
//                                       outside a coordinated region, waits M ms instead of 3 s before
//                                       it reports and aborts (app/run_main), so that test_failures
//                                       need not wait out the default where rank 0 cannot fail too
#pragma once
#include <chrono>
#include <string>

#include "app/forwarding_sink.hpp"
#include "fl/round_driver.hpp"

namespace fedsilo {

struct FaultPlan {
  enum class Kind { None, Data, Nan, Inf, Io, Slow, Stall } kind = Kind::None;
  int ms = 0;
  int rank = -1;
  int round = 0;
  int patience = 0;        // seconds; 0: the storage watchdog's own
  int reportDelayMs = -1;  // -1: run_main's own
  bool on(Kind k, int r) const { return kind == k && rank == r; }
  // The learning rate rank r trains with from `round` on under the nan or inf fault, or 0 (no change).
  double divergentLr(int r) const;
  // The storage watchdog's patience on rank 0: `patience` when it was given, else `normal`.
  std::chrono::seconds watchdogPatience(std::chrono::seconds normal) const {
    return patience > 0 ? std::chrono::seconds(patience) : normal;
  }
  // How long a rank other than 0 waits before it reports a failure it did not agree on.
  std::chrono::milliseconds unagreedReportDelay(std::chrono::milliseconds normal) const {
    return reportDelayMs >= 0 ? std::chrono::milliseconds(reportDelayMs) : normal;
  }
};

// Parses FEDSILO_FAULT (unset or empty: no fault). ConfigError on a malformed value.
FaultPlan faultPlanFromEnvironment();
FaultPlan parseFaultPlan(const std::string& text);

// The data, nan, inf and slow faults of rank `rank`, at the round driver's hook points.
class FaultInjection final : public RunHooks {
 public:
  FaultInjection(const FaultPlan& plan, int rank) : plan_(plan), rank_(rank) {}
  const FaultPlan& plan() const { return plan_; }
  // data: a directory that does not exist (the loader's own DataError).
  DataConfig dataToLoad(const DataConfig& configured) const override;
  // nan, inf: the divergent learning rate from plan.round on.
  TrainConfig training(int round, const TrainConfig& configured) const override;
  // slow: every rank pauses plan.ms milliseconds.
  void afterRound(int round) const override;
  // stall with round = -1: called while the results file is being created; blocks for good on rank R.
  void whileCreatingResults() const;

 private:
  FaultPlan plan_;
  int rank_;
};

// The io and stall faults: in front of the sink the experiment writes to, it fails (io) or blocks for
// good (stall) the first per-client row of round plan.round (io: and later) on rank plan.rank, as an
// HDF5 error, or a write stuck inside parallel HDF5, on one rank would.
class FaultySink final : public ForwardingSink {
 public:
  FaultySink(RecordSink& target, const FaultPlan& plan, int rank) : ForwardingSink(&target), plan_(plan), rank_(rank) {}
  void appendRoundInt(const std::string& name, std::int64_t value) override;
  void appendRoundClients(const std::string& name, const std::vector<double>& local) override;

 private:
  FaultPlan plan_;
  int rank_;
  int round_ = -1;
};

}  // namespace fedsilo
