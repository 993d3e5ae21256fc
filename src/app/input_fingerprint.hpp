// The fingerprint of a run's inputs that its configuration does not pin down, recorded in every
// checkpoint and compared on --resume (docs/hpc.md, "Checkpoints"): the data as loaded (data files
// replaced or edited since the checkpoint) and the partition they gave (the same configuration over
// other data, or a partitioner that changed between versions). CRC-32C of the values in memory, so it
// covers every data format alike and costs one pass over the data at start-up.
#pragma once
#include <cstdint>
#include <vector>

#include "data/dataset.hpp"
#include "fl/client.hpp"

namespace fedsilo {

// CRC-32C of the training and test sets (features, labels, natural client ids) and the vocabulary.
std::int64_t dataFingerprint(const DataBundle& data);
// CRC-32C of every client's id and train, validation and test index lists, in client order.
std::int64_t partitionFingerprint(const std::vector<ClientData>& clients);

}  // namespace fedsilo
