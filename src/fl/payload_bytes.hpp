// The bytes a silo sends and receives in a round (docs/system.md, "Payload bytes"): the real size of
// what the algorithm exchanges, counted from the round's layout and the client's update, not estimated
// from the parameter count. The one place the per-client byte figures of /rounds/client_upload_bytes
// and client_download_bytes come from, and what the simulated clock's transfer times are made of.
#pragma once
#include <cstddef>
#include <vector>

#include "compress/compressor.hpp"
#include "nn/model.hpp"

namespace fedsilo {

// The wire sizes of the exchanged values.
inline constexpr double kParamBytes = 4.0;  // a parameter: float32
inline constexpr double kValueBytes = 8.0;  // a block weight, an algorithm sum or payload value: float64

// What one round exchanges, the same for every client of the round.
struct RoundPayload {
  const std::vector<LayerBlock>* blocks = nullptr;
  std::vector<char> reduced;    // per block: federated this round (the server sends and receives it)
  int sums = 0;                 // algorithm sums per upload (Algorithm::sumsSize)
  int payloadValues = 0;        // gathered values per upload (Algorithm::payloadSize)
  int privacySums = 0;          // client-level DP's sums per upload
  std::size_t serverState = 0;  // values of the server state every client receives (Algorithm::serverState)
  // Secure aggregation: the key-agreement set's size and the masked words of one upload (0: off). The
  // upload is then every word of the accumulator as a 128-bit word plus the protocol's messages
  // (privacy/secure_aggregation.hpp, secAggCost, counted for a round without dropouts).
  int secureClients = 0;
  std::size_t secureWords = 0;
  // fl.compress: the codec every upload goes through (null: none), and with fl.compress_downlink the
  // broadcast too. What goes through it weighs its encoded size (header, scales, indices, values) in
  // place of the float32 blocks and float64 values, known from the layout alone (Compressor::encodedSize)
  // for every codec but ZFP's fixed accuracy, whose uploads keep the raw count until they are encoded.
  const Compressor* codec = nullptr;
  bool downlinkEncoded = false;
};

// The blocks a message carries: those reduced this round and, for an upload, given a non-zero weight
// (blockWeight; null: the broadcast, every reduced block).
BlockLayout sentBlockLayout(const std::vector<LayerBlock>& blocks, const std::vector<char>& reduced,
                            const std::vector<double>* blockWeight);

// A client's upload: each federated block it gives a non-zero weight (FedLP's kept layers, PLayer-FL's
// and FedBABU's federated blocks) as float32 with its weight, the sums and payload as float64; under
// secure aggregation the masked words and the protocol's messages instead; with a codec, its encoded
// size (0 when no block is sent).
double uploadBytes(const RoundPayload& round, const std::vector<double>& blockWeight);

// A client's download: the federated blocks of the round as float32 and the server state as float64,
// plus under secure aggregation what the protocol sends each client (keys, shares, survivor list); with
// the broadcast encoded, the codec's size of the reduced blocks.
double downloadBytes(const RoundPayload& round);

}  // namespace fedsilo
