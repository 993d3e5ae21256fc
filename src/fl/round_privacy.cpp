#include "fl/round_privacy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/error.hpp"
#include "core/timer.hpp"
#include "core/types.hpp"

namespace fedsilo {

std::unique_ptr<RoundPrivacy> RoundPrivacy::make(const ExperimentConfig& cfg, const Communicator& comm,
                                                 const Placement& placement, const std::vector<ClientData>& clients,
                                                 const std::vector<LayerBlock>& blocks) {
  if (!cfg.privacy.any()) return nullptr;
  return std::make_unique<RoundPrivacy>(cfg, comm, placement, clients, blocks);
}

RoundPrivacy::RoundPrivacy(const ExperimentConfig& cfg, const Communicator& comm, const Placement& placement,
                           const std::vector<ClientData>& clients, const std::vector<LayerBlock>& blocks)
    : cfg_(cfg), comm_(comm) {
  if (cfg.privacy.clientLevel()) clientDp_ = std::make_unique<ClientLevelDp>(cfg, blocks);
  if (cfg.privacy.sampleLevel()) sampleDp_ = std::make_unique<SampleLevelDp>(cfg, clients, placement, comm.rank());
  if (cfg.privacy.secureAggregation) secure_ = std::make_unique<SecureUpload>(cfg);
}

void RoundPrivacy::beginRound(int round, const std::vector<int>& selected, std::size_t words) {
  roundClients_ = static_cast<int>(selected.size());
  uploaded_.clear();
  secureSeconds_ = 0.0;
  if (secure_) secure_->beginRound(round, selected, words);
}

void RoundPrivacy::beforeClient(int client, int round, LocalTrainer& trainer) {
  if (sampleDp_) sampleDp_->beforeClient(client, round, trainer);
}

void RoundPrivacy::afterClient(LocalTrainer& trainer) {
  if (sampleDp_) sampleDp_->afterClient(trainer);
}

void RoundPrivacy::privatize(int client, int round, const std::vector<char>& reduced, const std::vector<float>& global,
                             ClientUpdate& update) {
  if (clientDp_) clientDp_->privatize(client, round, roundClients_, reduced, global, update);
}

ExactSum& RoundPrivacy::uploadTarget(ExactSum& acc) { return secure_ ? secure_->clientBuffer() : acc; }

void RoundPrivacy::finishUpload(int client, std::size_t sumsAt, ExactSum& acc) {
  uploaded_.push_back(client);
  if (clientDp_) clientDp_->addSums(secure_ ? secure_->buffer() : acc, sumsAt);
  if (!secure_) return;
  Timer timer;
  secure_->upload(client, acc);
  secureSeconds_ += timer.seconds();
}

void RoundPrivacy::afterReduction(ExactSum& acc, std::size_t sumsAt) {
  std::vector<int> survivors = comm_.gatherv(uploaded_, 0);
  if (!comm_.isRoot()) return;
  std::sort(survivors.begin(), survivors.end());  // client order, whatever the placement
  survivors_ = static_cast<int>(survivors.size());
  discarded_ = false;
  if (secure_) {
    Timer timer;
    discarded_ = !secure_->unmask(acc, survivors);
    secureSeconds_ += timer.seconds();
    if (discarded_)
      std::fprintf(stderr,
                   "fedsilo: warning: secure aggregation: %d of %d clients uploaded, below the threshold %d; the "
                   "round's sum is discarded\n",
                   survivors_, roundClients_, secure_->threshold(roundClients_));
  }
  clippedCount_ = clientDp_ && clientDp_->numSums() > 0 ? acc.value(sumsAt) : 0.0;
}

void RoundPrivacy::serverInput(int round, const ExactSum& acc, const std::vector<float>& global, ServerInput& in) {
  if (clientDp_) clientDp_->privatizeServerInput(round, acc, global, discarded_ ? 0 : survivors_, roundClients_, in);
}

double RoundPrivacy::endRound(int round) {
  std::vector<double> facts{clippedCount_, static_cast<double>(survivors_), discarded_ ? 1.0 : 0.0};
  comm_.bcast(facts.data(), facts.size(), 0);
  const int survivors = static_cast<int>(facts[1]);
  if (secure_) secure_->endRound(survivors, comm_.allreduceMax(secureSeconds_));
  if (clientDp_) return clientDp_->endRound(round, facts[0], survivors, facts[2] != 0.0);
  if (sampleDp_) {
    const double local = sampleDp_->endRound();
    return comm_.allreduceMax(std::isnan(local) ? -1.0 : local);
  }
  return kNaN;
}

void RoundPrivacy::checkpoint(StateArchive& ar) {
  if (clientDp_) clientDp_->checkpoint(ar);
  if (sampleDp_) sampleDp_->checkpoint(ar);
  if (secure_) secure_->checkpoint(ar);
}

void RoundPrivacy::record(RecordSink& sink) const {
  if (clientDp_) clientDp_->record(sink);
  if (sampleDp_) sampleDp_->record(sink, comm_);
  if (secure_) secure_->record(sink);
}

std::string RoundPrivacy::describe() const {
  const PrivacyConfig& p = cfg_.privacy;
  std::ostringstream os;
  os << "privacy:";
  if (p.level != PrivacyLevel::None) {
    const double z = sampleDp_ ? sampleDp_->noiseMultiplier() : p.noiseMultiplier;
    os << " level " << p.level << ", noise multiplier z = " << z;
    if (p.targetEpsilon > 0.0) os << " (calibrated for epsilon = " << p.targetEpsilon << ")";
    os << ", clip C = " << p.clip << (p.adaptiveClip ? " (initial; adaptive)" : "") << ", delta = " << p.delta;
    if (clientDp_)
      os << ", clients sampled with q = " << clientDp_->samplingRate() << " (Poisson), noise at the "
         << p.noisePlacement;
  }
  if (secure_) os << (p.level != PrivacyLevel::None ? ";" : "") << " secure aggregation";
  return os.str();
}

}  // namespace fedsilo
