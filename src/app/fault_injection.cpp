#include "app/fault_injection.hpp"

#include <chrono>
#include <cstdlib>
#include <limits>
#include <thread>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fedsilo {

namespace {

// The value of FEDSILO_FAULT's patience key: whole seconds, 1 to an hour.
int parsePatience(const std::string& value, const std::string& text) {
  const long long s = parseInt(value, "FEDSILO_FAULT patience");
  if (s < 1 || s > 3600)
    throw ConfigError(fmt("FEDSILO_FAULT = ", text, ": patience = ", value, ", expected seconds in 1..3600"));
  return static_cast<int>(s);
}

// The value of FEDSILO_FAULT's report_delay_ms key: 0 to 60000 ms.
int parseReportDelay(const std::string& value, const std::string& text) {
  const long long ms = parseInt(value, "FEDSILO_FAULT report_delay_ms");
  if (ms < 0 || ms > 60000)
    throw ConfigError(
        fmt("FEDSILO_FAULT = ", text, ": report_delay_ms = ", value, ", expected milliseconds in 0..60000"));
  return static_cast<int>(ms);
}

}  // namespace

FaultPlan parseFaultPlan(const std::string& text) {
  FaultPlan p;
  const std::string t = trim(text);
  if (t.empty()) return p;
  const auto colon = t.find(':');
  const std::string kind = t.substr(0, colon);
  if (kind == "data") p.kind = FaultPlan::Kind::Data;
  else if (kind == "nan") p.kind = FaultPlan::Kind::Nan;
  else if (kind == "inf") p.kind = FaultPlan::Kind::Inf;
  else if (kind == "io") p.kind = FaultPlan::Kind::Io;
  else if (kind == "slow") p.kind = FaultPlan::Kind::Slow;
  else if (kind == "stall") p.kind = FaultPlan::Kind::Stall;
  else throw ConfigError(fmt("FEDSILO_FAULT = ", text, ": expected data:rank=R, nan:rank=R,round=T, inf:rank=R,round=T, io:rank=R,round=T, slow:rank=R,ms=M or stall:rank=R,round=T"));
  std::string rest = colon == std::string::npos ? "" : t.substr(colon + 1);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string kv = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    const auto eq = kv.find('=');
    const std::string key = trim(kv.substr(0, eq));
    const std::string val = eq == std::string::npos ? "" : trim(kv.substr(eq + 1));
    if (key == "rank") p.rank = static_cast<int>(parseInt(val, "FEDSILO_FAULT rank"));
    else if (key == "round") p.round = static_cast<int>(parseInt(val, "FEDSILO_FAULT round"));
    else if (key == "ms") p.ms = static_cast<int>(parseInt(val, "FEDSILO_FAULT ms"));
    else if (key == "patience") p.patience = parsePatience(val, text);
    else if (key == "report_delay_ms") p.reportDelayMs = parseReportDelay(val, text);
    else throw ConfigError(fmt("FEDSILO_FAULT = ", text, ": unknown key '", key, "' (expected rank, round, ms, patience or report_delay_ms)"));
  }
  if (p.rank < 0) throw ConfigError(fmt("FEDSILO_FAULT = ", text, ": needs rank=R with R >= 0"));
  return p;
}

double FaultPlan::divergentLr(int r) const {
  if (on(Kind::Nan, r)) return 1e30;
  if (on(Kind::Inf, r)) return std::numeric_limits<double>::infinity();
  return 0.0;
}

FaultPlan faultPlanFromEnvironment() {
  const char* v = std::getenv("FEDSILO_FAULT");
  return parseFaultPlan(v ? v : "");
}

DataConfig FaultInjection::dataToLoad(const DataConfig& configured) const {
  DataConfig data = configured;
  if (plan_.on(FaultPlan::Kind::Data, rank_)) {
    data.dir = "/nonexistent/fedsilo-fault-injection";
    if (!data.file.empty()) data.file = data.dir + "/data";
  }
  return data;
}

TrainConfig FaultInjection::training(int round, const TrainConfig& configured) const {
  TrainConfig train = configured;
  const double lr = plan_.divergentLr(rank_);
  if (lr != 0.0 && round >= plan_.round) train.lr = lr;
  return train;
}

void FaultInjection::afterRound(int round) const {
  (void)round;
  if (plan_.kind == FaultPlan::Kind::Slow && plan_.ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(plan_.ms));
}

namespace {

// The stall fault: this thread sleeps until the process ends (the storage watchdog aborts it).
[[noreturn]] void stallForGood() {
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

}  // namespace

void FaultInjection::whileCreatingResults() const {
  if (plan_.on(FaultPlan::Kind::Stall, rank_) && plan_.round == -1) stallForGood();
}

void FaultySink::appendRoundInt(const std::string& name, std::int64_t value) {
  if (name == "round") round_ = static_cast<int>(value);
  ForwardingSink::appendRoundInt(name, value);
}

void FaultySink::appendRoundClients(const std::string& name, const std::vector<double>& local) {
  if (plan_.on(FaultPlan::Kind::Stall, rank_) && round_ == plan_.round) stallForGood();
  if (plan_.on(FaultPlan::Kind::Io, rank_) && round_ >= plan_.round)
    throw RuntimeError(fmt("HDF5: write /rounds/", name, " failed (injected on rank ", rank_, " in round ", round_,
                           " by FEDSILO_FAULT)"));
  ForwardingSink::appendRoundClients(name, local);
}

}  // namespace fedsilo
