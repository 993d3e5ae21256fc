// Partitioners: pure functions of (training labels, config, seed). Each returns, per client, the
// ascending list of training-sample indices it holds. Clients never share a sample.
#pragma once
#include <cstdint>
#include <vector>

#include "core/config.hpp"
#include "data/dataset.hpp"

namespace fedsilo {

std::vector<IndexList> partitionData(const DataBundle& data, int numClients, const PartitionConfig& cfg,
                                     std::uint64_t seed);

// The shards of the `shards` scheme: S lists of training indices, each holding ONE label. Class c
// gets a number of shards proportional to its size (largest remainder; every non-empty class at
// least one, so S must be >= the labels present, else ConfigError) and is cut into that many
// near-equal contiguous pieces of its ascending indices. Shard ids run in label order. The shards
// are disjoint and cover every index.
std::vector<IndexList> shardsByClass(const std::vector<std::int32_t>& labels, int numClasses, int S);

// One client's slice split into train / val / test (fractions cfg.split, summing to 1) after a
// seeded shuffle keyed by (seed, client). Each part is returned in ascending index order.
struct ClientSplit {
  IndexList train, val, test;
};
ClientSplit splitClient(const IndexList& slice, const std::vector<double>& fractions, std::uint64_t seed,
                        int client);

}  // namespace fedsilo
