// The robustness step of a round (docs/robustness.md): what the round driver calls, at a few named
// points, when fl.aggregator is not mean or attack.kind is set. It keeps the malicious silos, flips
// their labels while they train (label_flip), and, when the server needs the individual updates (a
// robust aggregator or a model-poisoning attack), keeps each local client's update Delta = sent -
// global over the reduced blocks, gathers them to rank 0 in client order, lets the attack replace the
// malicious rows there and the aggregator (src/robust) combine them, and hands the server step
// global + aggregate as the round's mean. The gather puts the rows in client order and the arithmetic
// is the robust module's fixed-order double arithmetic, so the results are the same at any rank count.
#pragma once
#include <memory>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/placement.hpp"
#include "core/config.hpp"
#include "core/exact_sum.hpp"
#include "core/record_sink.hpp"
#include "core/state_archive.hpp"
#include "fl/algorithm.hpp"
#include "fl/announcer.hpp"
#include "fl/local_trainer.hpp"
#include "fl/robust_columns.hpp"
#include "robust/aggregator.hpp"

namespace fedsilo {

class RobustRound {
 public:
  // nullptr when robustness is off (fl.aggregator = mean, attack.kind = none). Throws ConfigError when
  // the gathered updates would take more than fl.aggregator_memory_mb at rank 0.
  static std::unique_ptr<RobustRound> make(const ExperimentConfig& cfg, const Communicator& comm,
                                           const Placement& placement, const std::vector<LayerBlock>& blocks,
                                           int numClasses);
  RobustRound(const ExperimentConfig& cfg, const Communicator& comm, const Placement& placement,
              const std::vector<LayerBlock>& blocks, int numClasses);

  // The memory (MB) rank 0 needs for the gathered updates: the gathered rows and the client-ordered
  // matrix, 4 bytes each, of `rows` clients x `params` parameters.
  static double gatherMemoryMb(int rows, long long params);

  // --- one client (its rank) ---
  void beforeClient(int client, int round, LocalTrainer& trainer) const;  // label_flip on
  void afterClient(LocalTrainer& trainer) const;                          // label_flip off
  // Keeps the client's update (`sent` minus the global parameters, over the reduced blocks) for the
  // gather, when the server needs it.
  void keepUpdate(int client, const std::vector<char>& reduced, const std::vector<double>& blockWeight,
                  const float* sent, const std::vector<float>& global);

  // --- server ---
  // Collective: the kept updates to rank 0; or, for a coordinate-wise aggregator and attack, shared out
  // by column blocks and attacked and aggregated on every rank (fl/robust_columns.hpp).
  void gather(int round);
  // Rank 0: attack and aggregate; `in` then reads global + aggregate as the mean of each reduced block.
  // With fewer updates than the aggregator needs (Krum's 2f + 3, after dropouts), the round keeps the
  // global model (docs/robustness.md), records no update as used and warns.
  void serverInput(int round, const std::vector<float>& global, ServerInput& in, Announcer& announce);
  // Collective, after the server step: the aggregator's choices to every rank.
  void endRound();

  void recordRound(RecordSink& sink) const;  // collective: /rounds/aggregator_selected, aggregator_weight
  void record(RecordSink& sink) const;       // collective: /clients/malicious
  void checkpoint(StateArchive& ar);         // the centre of centered clipping

 private:
  // Rank 0: the gathered rows in client order, attacked and aggregated.
  AggregatedRound aggregateGathered(int round, int needed);
  // Rank 0: the result as this round's choices and as global + aggregate in `in`.
  void useResult(const AggregatedRound& r, const std::vector<float>& global, ServerInput& in);
  // The round of too few updates: every reduced block keeps the global model (weight sum 0).
  void keepGlobalModel(int round, int rows, int needed, const std::vector<int>& senders, ServerInput& in,
                       Announcer& announce);

  const ExperimentConfig& cfg_;
  const Communicator& comm_;
  const Placement& placement_;
  const std::vector<LayerBlock>& blocks_;
  int numClasses_ = 0;
  std::vector<char> malicious_;  // per client
  bool gathers_ = false;
  bool byColumns_ = false;          // gathers_, with an aggregator and attack that run by column blocks
  ColumnShare columns_;             // byColumns_: this round's kept updates, cut by rank
  AggregatedRound byColumnsRound_;  // byColumns_: the round's result (rank 0)
  // This round's kept updates of this rank (ids, weights, rows) and, on rank 0, everyone's.
  std::vector<int> ids_;
  std::vector<double> weights_;
  std::vector<float> rows_;
  // The last aggregate (centered clipping's starting point): rank 0's; with byColumns_, every rank
  // holds its own columns of it (all it reads) and rank 0 the whole.
  std::vector<double> center_;
  ExactSum mean_;                          // rank 0: global + aggregate at the accumulator's offsets
  std::vector<double> selected_, weight_;  // per client, this round (replicated after endRound)
};

}  // namespace fedsilo
