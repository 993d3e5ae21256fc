// The privacy step of a round (docs/privacy.md): what the round driver calls, at a few named points,
// when privacy.level or privacy.secure_aggregation is set. It owns the three parts:
//   ClientLevelDp  (fl/client_privacy.hpp)  Poisson selection, clipping, noise, fixed-denominator mean
//   SampleLevelDp  (fl/sample_privacy.hpp)  DP-SGD in the trainer, one accountant per client
//   SecureUpload   (fl/secure_upload.hpp)   masked uploads, modular reduction, recovery
// Everything random is keyed by (seed, client, round, purpose), and the server side works on the exact
// reduced sums, so a private run too is the same at any number of ranks.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/placement.hpp"
#include "core/config.hpp"
#include "core/exact_sum.hpp"
#include "core/record_sink.hpp"
#include "core/state_archive.hpp"
#include "fl/algorithm.hpp"
#include "fl/client.hpp"
#include "fl/client_privacy.hpp"
#include "fl/local_trainer.hpp"
#include "fl/sample_privacy.hpp"
#include "fl/secure_upload.hpp"

namespace fedsilo {

class RoundPrivacy {
 public:
  // nullptr when privacy is off (every privacy option at its default).
  static std::unique_ptr<RoundPrivacy> make(const ExperimentConfig& cfg, const Communicator& comm,
                                            const Placement& placement, const std::vector<ClientData>& clients,
                                            const std::vector<LayerBlock>& blocks);
  RoundPrivacy(const ExperimentConfig& cfg, const Communicator& comm, const Placement& placement,
               const std::vector<ClientData>& clients, const std::vector<LayerBlock>& blocks);

  // --- layout (every rank) ---
  // Client-level DP selects the clients itself (Poisson sampling).
  bool selectsClients() const { return clientDp_ != nullptr; }
  std::vector<int> selectClients(int round) const { return clientDp_->selectClients(round); }
  // Exact sums appended to the round's reduction (after the algorithm's).
  int numSums() const { return clientDp_ ? clientDp_->numSums() : 0; }
  // Before the clients train: the round's clients and the words of one upload.
  void beginRound(int round, const std::vector<int>& selected, std::size_t words);

  // --- one client (its rank) ---
  void beforeClient(int client, int round, LocalTrainer& trainer);
  void afterClient(LocalTrainer& trainer);
  // Client-level DP on the update the client is about to send.
  void privatize(int client, int round, const std::vector<char>& reduced, const std::vector<float>& global,
                 ClientUpdate& update);
  // Where the driver accumulates the client's terms: `acc`, or with secure aggregation a buffer of the
  // client's own, which finishUpload masks into `acc` after adding the privacy sums at `sumsAt`.
  ExactSum& uploadTarget(ExactSum& acc);
  void finishUpload(int client, std::size_t sumsAt, ExactSum& acc);

  // --- server ---
  // Collective, after the reduction to rank 0: the uploaders are gathered; rank 0 unmasks `acc` and
  // reads the privacy sums at `sumsAt`.
  void afterReduction(ExactSum& acc, std::size_t sumsAt);
  // Rank 0: client-level DP's noised mean into the server input.
  void serverInput(int round, const ExactSum& acc, const std::vector<float>& global, ServerInput& in);
  // Collective, after the server step: the accountants; returns the epsilon to print (client level:
  // the run's; sample level: the largest client's; NaN without DP).
  double endRound(int round);

  void checkpoint(StateArchive& ar);
  void record(RecordSink& sink) const;  // collective
  // The banner line: level, z (calibrated?), C, delta, q and noise placement, secure aggregation.
  std::string describe() const;

 private:
  const ExperimentConfig& cfg_;
  const Communicator& comm_;
  std::unique_ptr<ClientLevelDp> clientDp_;
  std::unique_ptr<SampleLevelDp> sampleDp_;
  std::unique_ptr<SecureUpload> secure_;
  int roundClients_ = 0;        // |U|
  std::vector<int> uploaded_;   // this rank's clients that uploaded this round
  double clippedCount_ = 0.0;   // rank 0: the adaptive count's sum
  bool discarded_ = false;      // rank 0: secure aggregation could not unmask the round
  int survivors_ = 0;           // rank 0: clients that uploaded
  double secureSeconds_ = 0.0;  // this rank's masking and unmasking time this round
};

}  // namespace fedsilo
