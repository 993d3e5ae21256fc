#include "sim/sync_round.hpp"

#include <algorithm>
#include <limits>

#include "sim/link_sharing.hpp"
#include "sim/timing.hpp"

namespace fedsilo {

std::vector<double> syncUploadSeconds(const SystemModel& model, const std::vector<SyncSender>& senders) {
  const double serverMbps = model.config().serverBandwidthMbps;
  std::vector<double> seconds;
  seconds.reserve(senders.size());
  if (serverMbps <= 0.0) {
    for (const SyncSender& s : senders) seconds.push_back(model.uploadSeconds(s.client, s.uploadBytes));
    return seconds;
  }
  std::vector<SharedUpload> uploads;
  for (const SyncSender& s : senders)
    uploads.push_back({s.ready, s.uploadBytes, bytesPerSecond(model.profile(s.client).uplinkMbps)});
  const std::vector<double> through = sharedLinkFinish(uploads, bytesPerSecond(serverMbps));
  for (std::size_t i = 0; i < senders.size(); ++i) {
    const double latency = senders[i].uploadBytes > 0.0 ? model.profile(senders[i].client).latencyMs / 1000.0 : 0.0;
    seconds.push_back(through[i] - senders[i].ready + latency);
  }
  return seconds;
}

bool meetsDeadline(double download, double compute, double upload, double deadline) {
  return deadline <= 0.0 || download + compute + upload <= deadline;
}

double syncRoundSeconds(const std::vector<double>& finish, bool someMissedDeadline, const SystemConfig& cfg) {
  double last = 0.0;
  for (double f : finish) last = std::max(last, f);
  if (someMissedDeadline) last = std::max(last, cfg.deadlineSeconds);
  return last + cfg.serverSeconds;
}

}  // namespace fedsilo
