// The exact sums of the buffered updates of several consecutive versions (fl/async_driver.hpp), reduced
// to rank 0 in one collective call. When a wave of equally fast silos arrives at once, FedBuff makes
// several versions from it (K / buffer_size); their sums are known before the first of them is made, and
// one reduction of the concatenated accumulators costs one collective call where one per version cost
// one each (docs/async.md, "Cost").
//
// Batching changes when the bytes move, never a bit of a sum: each term w_j u_j is quantised on its own
// (core/exact_sum.hpp) and fixed-point addition is exact, so a version's sum is the same whether it is
// reduced alone or with others, at any rank count.
#pragma once
#include <cstddef>
#include <vector>

#include "comm/communicator.hpp"
#include "core/exact_sum.hpp"

namespace fedsilo {

class VersionSums {
 public:
  explicit VersionSums(std::size_t numParams) : n_(numParams) {}
  // How many versions one batch may hold: as many as fit kBatchBytes of accumulators, at least one.
  std::size_t maxVersions() const;
  // Starts a batch of the versions [first, first + count), every sum zero (the accumulator's memory is
  // reused from batch to batch).
  void start(int first, int count);
  // The sum of `version` (in the batch) += w * x, x holding the model's numParams values.
  void add(int version, const float* x, double w);
  // Reduces the batch to rank 0 (collective).
  void reduce(const Communicator& comm) { comm.reduceExact(acc_, 0); }
  bool holds(int version) const { return count_ > 0 && version >= first_ && version < first_ + count_; }
  // Rank 0, after reduce(): the sum of `version` as doubles (out is resized to numParams).
  void values(int version, std::vector<double>& out) const;
  // Drops the batch (a restored checkpoint: the sums are reduced again from the restored updates).
  void forget() { count_ = 0; }

 private:
  static constexpr std::size_t kBatchBytes = std::size_t(256) << 20;
  std::size_t offset(int version) const;

  std::size_t n_;
  int first_ = 0, count_ = 0;
  ExactSum acc_;
};

}  // namespace fedsilo
