// A synchronous round on the simulated clock (docs/system.md): every selected silo downloads the
// global model, trains and uploads; the round ends when the last upload is through (or at the deadline
// when a silo missed it), plus the server's own time.
#pragma once
#include <vector>

#include "sim/system_model.hpp"

namespace fedsilo {

// A silo that uploads this round: `ready` = its download + compute seconds, when its upload starts.
struct SyncSender {
  int client = 0;
  double ready = 0.0;
  double uploadBytes = 0.0;
};

// Each sender's upload seconds (its latency included), in the order given: over its own uplink, and
// with system.server_bandwidth_mbps set, sharing the server's link max-min fairly with the uploads that
// overlap it (sim/link_sharing.hpp).
std::vector<double> syncUploadSeconds(const SystemModel& model, const std::vector<SyncSender>& senders);

// Whether a silo whose download, compute and upload take these seconds meets `deadline` (0: none).
bool meetsDeadline(double download, double compute, double upload, double deadline);

// The round's simulated seconds: the latest of `finish` (each sender's ready + upload, and the end of the
// silos that trained but sent nothing), at least the deadline when a silo missed it (the server waits
// until then), plus system.server_seconds.
double syncRoundSeconds(const std::vector<double>& finish, bool someMissedDeadline, const SystemConfig& cfg);

}  // namespace fedsilo
