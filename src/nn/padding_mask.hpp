// Which positions of a batch of token sequences hold real tokens: written by the transformer's
// embedding layer on every forward pass (token id 0 is padding, the convention of the sequence and
// LEAF text datasets) and read by its self-attention layer, which gives padded keys zero weight.
// Shared by the two layers because the model passes one activation matrix between layers and the
// token ids are gone after the embedding.
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.hpp"

namespace fedsilo {

struct PaddingMask {
  int seqLen = 0;
  // real[b * seqLen + t] == 1 when token t of sample b is not padding; sized for the reserved batch.
  std::vector<std::uint8_t> real;
  bool isReal(Index b, Index t) const { return real[static_cast<std::size_t>(b * seqLen + t)] != 0; }
};

}  // namespace fedsilo
