// The bytes a silo exchanges in a round (fl/payload_bytes.hpp), on hand-counted cases.
#include <gtest/gtest.h>

#include <vector>

#include "compress/sign_codec.hpp"
#include "fl/payload_bytes.hpp"
#include "support/two_blocks.hpp"

namespace fedsilo {
namespace {

using test::twoBlocks;

TEST(PayloadBytes, UploadCountsTheFederatedBlocksTheClientWeightsAndItsValues) {
  const std::vector<LayerBlock> blocks = twoBlocks();
  RoundPayload round;
  round.blocks = &blocks;
  round.reduced = {1, 0};  // fc2 is a local layer (PLayer-FL after its split, FedBABU's head)
  round.sums = 2;
  round.payloadValues = 3;
  // fc1 as float32 with its float64 weight, five float64 values: 400 + 8 + 40.
  EXPECT_EQ(uploadBytes(round, {2.0, 1.0}), 448.0);
  round.reduced = {1, 1};
  // A block the client gives weight 0 is not sent (FedLP's pruned layers): fc2 only, 40 + 8 + 40.
  EXPECT_EQ(uploadBytes(round, {0.0, 1.0}), 88.0);
  round.privacySums = 1;
  EXPECT_EQ(uploadBytes(round, {0.0, 1.0}), 96.0);
}

TEST(PayloadBytes, DownloadIsTheFederatedBlocksAndTheServerState) {
  const std::vector<LayerBlock> blocks = twoBlocks();
  RoundPayload round;
  round.blocks = &blocks;
  round.reduced = {1, 0};
  EXPECT_EQ(downloadBytes(round), 400.0);
  round.reduced = {1, 1};
  round.serverState = 5;  // e.g. SCAFFOLD's server control variate
  EXPECT_EQ(downloadBytes(round), 440.0 + 40.0);
  round.reduced = {0, 0};  // Local: nothing federated
  round.serverState = 0;
  EXPECT_EQ(downloadBytes(round), 0.0);
}

TEST(PayloadBytes, SecureAggregationSendsMaskedWordsAndTheProtocolsMessages) {
  const std::vector<LayerBlock> blocks = twoBlocks();
  RoundPayload round;
  round.blocks = &blocks;
  round.reduced = {1, 1};
  round.secureClients = 3;
  round.secureWords = 10;
  // Sent: 2 keys (64), 2 share ciphertexts of 2*4 + 2*32 + 28 = 100 (200), 10 words of 16 (160), 2
  // unmasking shares of 4 + 32 (72).
  EXPECT_EQ(uploadBytes(round, {1.0, 1.0}), 64.0 + 200.0 + 160.0 + 72.0);
  // Received besides the model (440): 3 clients' keys and ids (3 * 68), 2 share ciphertexts (200), the
  // survivor list (3 * 4).
  EXPECT_EQ(downloadBytes(round), 440.0 + 204.0 + 200.0 + 12.0);
}

TEST(PayloadBytes, ACodecChargesItsEncodedSizeInPlaceOfTheFloatsAndValues) {
  const std::vector<LayerBlock> blocks = twoBlocks();
  const SignCodec sign;
  RoundPayload round;
  round.blocks = &blocks;
  round.reduced = {1, 1};
  round.sums = 2;
  round.codec = &sign;
  // The header, then per block its scale and one bit per value: 8 + (4 + 13) + (4 + 2).
  EXPECT_EQ(uploadBytes(round, {1.0, 1.0}), 31.0);
  EXPECT_EQ(uploadBytes(round, {0.0, 1.0}), 8.0 + 4.0 + 2.0);
  EXPECT_EQ(uploadBytes(round, {0.0, 0.0}), 0.0);  // no block to encode: nothing is sent
  EXPECT_EQ(downloadBytes(round), 440.0);          // the broadcast is not encoded
  round.downlinkEncoded = true;
  EXPECT_EQ(downloadBytes(round), 31.0);
}

}  // namespace
}  // namespace fedsilo
