#include "fl/payload_bytes.hpp"

#include "privacy/secure_aggregation.hpp"

namespace fedsilo {

namespace {

double valuesBytes(const RoundPayload& round) {
  return kValueBytes * static_cast<double>(round.sums + round.payloadValues + round.privacySums);
}

bool secure(const RoundPayload& round) { return round.secureClients > 0; }

}  // namespace

double uploadBytes(const RoundPayload& round, const std::vector<double>& blockWeight) {
  if (secure(round)) return secAggCost(round.secureClients, 0, round.secureWords).bytesSentPerClient;
  double bytes = valuesBytes(round);
  const std::vector<LayerBlock>& blocks = *round.blocks;
  for (std::size_t b = 0; b < blocks.size(); ++b)
    if (round.reduced[b] && blockWeight[b] != 0.0)
      bytes += kParamBytes * static_cast<double>(blocks[b].size) + kValueBytes;
  return bytes;
}

double downloadBytes(const RoundPayload& round) {
  double bytes = kValueBytes * static_cast<double>(round.serverState);
  const std::vector<LayerBlock>& blocks = *round.blocks;
  for (std::size_t b = 0; b < blocks.size(); ++b)
    if (round.reduced[b]) bytes += kParamBytes * static_cast<double>(blocks[b].size);
  if (secure(round)) bytes += secAggCost(round.secureClients, 0, round.secureWords).bytesReceivedPerClient;
  return bytes;
}

}  // namespace fedsilo
