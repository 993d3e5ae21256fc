// Secure aggregation in the round (Bonawitz et al. 2017; privacy/secure_aggregation.hpp for the
// protocol's arithmetic and cost model): the round driver's uploads become masked fixed-point words.
//
// Each client that uploads accumulates its contribution (the driver's exact terms: w v per reduced
// block, the weights, the exact sums) into a buffer of its own, adds its self mask and its pair masks
// with every other client of the round's key-agreement set U (the round's selected clients), and adds
// the result to its rank's accumulator modulo 2^128. The reduction over ranks is modular too
// (Fixed128::add). Rank 0 then removes the survivors' self masks and the pair masks of the clients
// that dropped out (fl.dropout, or a diverged update dropped by fl.skip_diverged): what remains is the
// exact sum the driver forms without secure aggregation, bit for bit. With fewer survivors than the
// threshold the round's sum is discarded, as the protocol aborts.
#pragma once
#include <optional>
#include <vector>

#include "core/config.hpp"
#include "core/exact_sum.hpp"
#include "core/record_sink.hpp"
#include "core/state_archive.hpp"
#include "privacy/secure_aggregation.hpp"

namespace fedsilo {

class SecureUpload {
 public:
  explicit SecureUpload(const ExperimentConfig& cfg) : cfg_(cfg) {}

  // Every rank, before the clients train: U and the words of one upload.
  void beginRound(int round, const std::vector<int>& clients, std::size_t words);
  // A cleared buffer for one client's contribution, and the same buffer again (uncleared).
  ExactSum& clientBuffer();
  ExactSum& buffer() { return buffer_; }
  // Masks the client's buffer and adds it to `acc` modulo 2^128.
  void upload(int client, ExactSum& acc);
  // Rank 0, after the reduction: removes the masks left in `acc` given the clients that uploaded.
  // Returns false (and zeroes acc) when they are fewer than the threshold.
  bool unmask(ExactSum& acc, const std::vector<int>& survivors);
  // Every rank (replicated arguments): the round's protocol cost for |U| clients of which `survivors`
  // uploaded, and the seconds the masking and unmasking took (the slowest rank's).
  void endRound(int survivors, double seconds);
  // Survivors needed to unmask a round of `clients` clients: privacy.secagg_threshold, or a majority.
  int threshold(int clients) const;

  void checkpoint(StateArchive& ar);
  // /privacy/secagg_* [T]: clients, dropped, bytes_sent, bytes_received, plain_bytes, messages,
  // extra_round_trips, seconds (docs/results.md).
  void record(RecordSink& sink) const;

 private:
  const ExperimentConfig& cfg_;
  std::optional<SecureAggregation> round_;
  std::size_t words_ = 0;
  ExactSum buffer_;
  // Per round run: [clients, dropped, bytes sent, bytes received, plain bytes, messages, extra round
  // trips, seconds] (NaN costs in a round nobody could upload).
  std::vector<std::vector<double>> rows_;
};

}  // namespace fedsilo
