#include "fl/sim_round.hpp"

#include <algorithm>
#include <cmath>

#include "fl/compressed_upload.hpp"
#include "sim/sync_round.hpp"

namespace fedsilo {

SimRound::SimRound(const ExperimentConfig& cfg, const Communicator& comm, const Placement& placement,
                   double trainFlopsPerSample)
    : cfg_(cfg),
      comm_(comm),
      placement_(placement),
      model_(cfg.system, cfg.seed, cfg.clients),
      flopsPerSample_(trainFlopsPerSample) {}

void SimRound::beginRound(int round, RoundPayload payload) {
  round_ = round;
  payload_ = std::move(payload);
  downloadBytes_ = downloadBytes(payload_);
  const auto n = static_cast<std::size_t>(placement_.count(comm_.rank()));
  outcome_.assign(n, Outcome::Idle);
  compute_.assign(n, kNaN);
  upload_.assign(n, kNaN);
  download_.assign(n, kNaN);
  uploadBytes_.assign(n, 0.0);
  clientDownloadBytes_.assign(n, 0.0);
  roundSeconds_ = kNaN;
}

bool SimRound::clientTrained(int client, std::int64_t samples, const std::vector<double>* blockWeight) {
  const auto i = static_cast<std::size_t>(slot(client));
  clientDownloadBytes_[i] = downloadBytes_;
  const double sent = blockWeight ? uploadBytes(payload_, *blockWeight) : 0.0;
  uploadBytes_[i] = sent;
  outcome_[i] = blockWeight ? Outcome::Sent : Outcome::SentNothing;
  if (!clockOn()) return true;
  download_[i] = model_.downloadSeconds(client, downloadBytes_);
  compute_[i] = model_.computeSeconds(client, round_, flopsPerSample_, static_cast<double>(samples));
  if (!blockWeight) return true;
  // Over the silo's own uplink: a deadline never runs with a shared server link (app/system_options),
  // where each upload's time would depend on the others'.
  upload_[i] = model_.uploadSeconds(client, sent);
  if (meetsDeadline(download_[i], compute_[i], upload_[i], cfg_.system.deadlineSeconds)) return true;
  outcome_[i] = Outcome::MissedDeadline;  // the server closes the round without it: nothing arrives
  uploadBytes_[i] = 0.0;
  return false;
}

void SimRound::chargeEncodedBytes(const EncodedRoundBytes& encoded, bool downlinkEncoded) {
  for (int k : placement_.clients(comm_.rank())) {
    const auto i = static_cast<std::size_t>(slot(k));
    if (outcome_[i] == Outcome::Sent) uploadBytes_[i] = encoded.upload[static_cast<std::size_t>(k)];
    if (downlinkEncoded && outcome_[i] != Outcome::Idle) clientDownloadBytes_[i] = encoded.broadcast;
  }
}

namespace {

// One gathered row per silo that took part: [client, outcome, download, compute, upload bytes].
constexpr std::size_t kRowWidth = 5;

}  // namespace

void SimRound::endRound() {
  if (!clockOn()) return;
  std::vector<double> mine;
  const std::vector<int>& local = placement_.clients(comm_.rank());
  for (std::size_t i = 0; i < outcome_.size(); ++i)
    if (outcome_[i] != Outcome::Idle)
      mine.insert(mine.end(), {static_cast<double>(local[i]), static_cast<double>(outcome_[i]), download_[i],
                               compute_[i], uploadBytes_[i]});
  std::vector<double> rows = comm_.allgatherv(mine);
  std::vector<std::size_t> at;  // rows in client order, whatever the placement
  for (std::size_t r = 0; r < rows.size(); r += kRowWidth) at.push_back(r);
  std::sort(at.begin(), at.end(), [&](std::size_t a, std::size_t b) { return rows[a] < rows[b]; });
  std::vector<SyncSender> senders;
  std::vector<double> finish;
  bool missed = false;
  for (std::size_t r : at) {
    const auto outcome = static_cast<Outcome>(static_cast<int>(rows[r + 1]));
    const double ready = rows[r + 2] + rows[r + 3];
    if (outcome == Outcome::Sent) senders.push_back({static_cast<int>(rows[r]), ready, rows[r + 4]});
    if (outcome == Outcome::SentNothing) finish.push_back(ready);
    missed = missed || outcome == Outcome::MissedDeadline;
  }
  const std::vector<double> upload = syncUploadSeconds(model_, senders);
  for (std::size_t s = 0; s < senders.size(); ++s) {
    finish.push_back(senders[s].ready + upload[s]);
    if (placement_.owner(senders[s].client) == comm_.rank())
      upload_[static_cast<std::size_t>(slot(senders[s].client))] = upload[s];
  }
  roundSeconds_ = syncRoundSeconds(finish, missed, cfg_.system);
  simTime_ += roundSeconds_;
}

void SimRound::noteAccuracyAt(int round, bool evaluated, double globalAccuracy, double meanClientAccuracy,
                              double time) {
  const double target = cfg_.system.targetAccuracy;
  if (target <= 0.0 || !evaluated || !std::isnan(targetRound_)) return;
  const double reached = cfg_.system.targetMetric == TargetMetric::Global ? globalAccuracy : meanClientAccuracy;
  if (!(reached >= target)) return;
  targetRound_ = round + 1;  // rounds run
  targetTime_ = time;
}

void SimRound::recordRound(RecordSink& sink) const {
  sink.appendRoundClients("client_upload_bytes", uploadBytes_);
  sink.appendRoundClients("client_download_bytes", clientDownloadBytes_);
  if (!clockOn()) return;
  sink.appendRoundScalar("sim_seconds", roundSeconds_);
  sink.appendRoundScalar("sim_time", simTime_);
  sink.appendRoundClients("client_compute_seconds", compute_);
  sink.appendRoundClients("client_upload_seconds", upload_);
  sink.appendRoundClients("client_download_seconds", download_);
}

void SimRound::record(RecordSink& sink) const {
  if (clockOn()) {
    std::vector<double> gflops, up, down, latency;
    for (int k : placement_.clients(comm_.rank())) {
      const SiloProfile& p = model_.profile(k);
      gflops.push_back(p.computeGflops);
      up.push_back(p.uplinkMbps);
      down.push_back(p.downlinkMbps);
      latency.push_back(p.latencyMs);
    }
    sink.writeClientRows("/clients/compute_gflops", gflops, 1);
    sink.writeClientRows("/clients/uplink_mbps", up, 1);
    sink.writeClientRows("/clients/downlink_mbps", down, 1);
    sink.writeClientRows("/clients/latency_ms", latency, 1);
  }
  if (cfg_.system.targetAccuracy <= 0.0) return;
  sink.writeScalar("/summary/rounds_to_target", targetRound_);
  sink.writeScalar("/summary/time_to_target", targetTime_);
}

void SimRound::checkpoint(StateArchive& ar) {
  std::vector<double> state{simTime_, targetRound_, targetTime_};
  ar.doubles("sim/state", state);
  if (ar.saving()) return;
  FEDSILO_ASSERT(state.size() == 3, "checkpoint sim/state holds ", state.size(), " values");
  simTime_ = state[0];
  targetRound_ = state[1];
  targetTime_ = state[2];
}

}  // namespace fedsilo
