// The simulated deployment's step of a round (docs/system.md): what the round driver calls, at a few
// named points, to put the round on the simulated clock. Every selected silo downloads the round's
// federated blocks, trains and uploads; src/sim turns the bytes (fl/payload_bytes) and the samples
// trained into seconds; the round lasts until the last upload is through (or the deadline), plus the
// server's time. A silo that misses fl.deadline_seconds does not enter the aggregate.
//
// The bytes each silo exchanges are recorded in every run; the times only with the system model on.
// Every figure is a function of the configuration, the client and the round, and the round's length
// is computed on every rank from the same gathered rows in client order, so it is the same at any
// rank count; it costs one small gather per round when the model is on, nothing when it is off.
#pragma once
#include <cstdint>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/placement.hpp"
#include "core/config.hpp"
#include "core/record_sink.hpp"
#include "core/state_archive.hpp"
#include "core/types.hpp"
#include "fl/payload_bytes.hpp"
#include "sim/system_model.hpp"

namespace fedsilo {

struct EncodedRoundBytes;  // fl/compressed_upload.hpp

class SimRound {
 public:
  SimRound(const ExperimentConfig& cfg, const Communicator& comm, const Placement& placement,
           double trainFlopsPerSample);

  bool clockOn() const { return model_.enabled(); }
  bool hasDeadline() const { return clockOn() && cfg_.system.deadlineSeconds > 0.0; }

  // --- every rank, before the clients train ---
  void beginRound(int round, RoundPayload payload);

  // --- one client (its rank) ---
  // The client downloaded the round's model and trained `samples` samples; `blockWeight` is what it
  // sends (null: nothing, its update diverged). Returns false when it misses the deadline: it then
  // sends nothing into the aggregate.
  bool clientTrained(int client, std::int64_t samples, const std::vector<double>* blockWeight);

  // --- every rank, after the server step (collective when the clock is on) ---
  // The round's simulated seconds (NaN when the clock is off), and the clock's running total.
  void endRound();
  double roundSeconds() const { return roundSeconds_; }
  double simTime() const { return clockOn() ? simTime_ : kNaN; }
  // The round's evaluation against eval.target_accuracy (replicated figures).
  void noteAccuracy(int round, bool evaluated, double globalAccuracy, double meanClientAccuracy) {
    noteAccuracyAt(round, evaluated, globalAccuracy, meanClientAccuracy, simTime());
  }
  // The same at simulated time `time` (an asynchronous version's, fl/async_driver.hpp).
  void noteAccuracyAt(int round, bool evaluated, double globalAccuracy, double meanClientAccuracy, double time);

  // /rounds/client_upload_bytes and client_download_bytes, and with the clock on sim_seconds,
  // sim_time and the per-client seconds (collective).
  void recordRound(RecordSink& sink) const;
  // With fl.compress the wire carries the encoded sizes: the round's payload names the codec, and
  // clientTrained charges the size its layout gives (fl/payload_bytes) to the record, the deadline test
  // and the clock. Once the updates are encoded, their sizes replace this round's upload counts, and with
  // fl.compress_downlink the download of every silo that took part: the same figures, but for ZFP's
  // fixed-accuracy sizes (refused with the clock: refuseUnsoundCompression), known only from the stream.
  void chargeEncodedBytes(const EncodedRoundBytes& encoded, bool downlinkEncoded);
  // /clients/compute_gflops, uplink_mbps, downlink_mbps, latency_ms with the clock on, and
  // /summary/rounds_to_target, time_to_target with eval.target_accuracy set (collective).
  void record(RecordSink& sink) const;
  // The clock's total and the target's first attainment (replicated values).
  void checkpoint(StateArchive& ar);

 private:
  // What one local client did this round.
  enum class Outcome { Idle, Sent, SentNothing, MissedDeadline };
  int slot(int client) const { return placement_.slot(client); }

  const ExperimentConfig& cfg_;
  const Communicator& comm_;
  const Placement& placement_;
  SystemModel model_;
  double flopsPerSample_ = 0.0;
  int round_ = 0;
  RoundPayload payload_;
  double downloadBytes_ = 0.0;  // this round's, the same for every client
  // This round's figures per local client (seconds NaN, bytes 0 when idle).
  std::vector<Outcome> outcome_;
  std::vector<double> compute_, upload_, download_, uploadBytes_, clientDownloadBytes_;
  double roundSeconds_ = kNaN;
  double simTime_ = 0.0;
  double targetRound_ = kNaN, targetTime_ = kNaN;  // the first round that reached the target, its clock
};

}  // namespace fedsilo
