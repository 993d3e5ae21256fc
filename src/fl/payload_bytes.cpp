#include "fl/payload_bytes.hpp"

#include <optional>

#include "privacy/secure_aggregation.hpp"

namespace fedsilo {

namespace {

double valuesBytes(const RoundPayload& round) {
  return kValueBytes * static_cast<double>(round.sums + round.payloadValues + round.privacySums);
}

bool secure(const RoundPayload& round) { return round.secureClients > 0; }

// The codec's size of the blocks in `layout`, where it knows it before encoding.
std::optional<double> encodedBytes(const RoundPayload& round, const BlockLayout& layout) {
  if (!round.codec) return std::nullopt;
  const std::optional<std::size_t> bytes = round.codec->encodedSize(layout);
  if (!bytes) return std::nullopt;
  return static_cast<double>(*bytes);
}

}  // namespace

BlockLayout sentBlockLayout(const std::vector<LayerBlock>& blocks, const std::vector<char>& reduced,
                            const std::vector<double>* blockWeight) {
  BlockLayout layout;
  for (std::size_t b = 0; b < blocks.size(); ++b)
    if (reduced[b] && (!blockWeight || (*blockWeight)[b] != 0.0))
      layout.push_back({static_cast<std::size_t>(blocks[b].offset), static_cast<std::size_t>(blocks[b].size)});
  return layout;
}

double uploadBytes(const RoundPayload& round, const std::vector<double>& blockWeight) {
  if (secure(round)) return secAggCost(round.secureClients, 0, round.secureWords).bytesSentPerClient;
  if (round.codec) {
    const BlockLayout layout = sentBlockLayout(*round.blocks, round.reduced, &blockWeight);
    if (layout.empty()) return 0.0;  // nothing to encode: the upload is not sent
    if (const std::optional<double> bytes = encodedBytes(round, layout)) return *bytes;
  }
  double bytes = valuesBytes(round);
  const std::vector<LayerBlock>& blocks = *round.blocks;
  for (std::size_t b = 0; b < blocks.size(); ++b)
    if (round.reduced[b] && blockWeight[b] != 0.0)
      bytes += kParamBytes * static_cast<double>(blocks[b].size) + kValueBytes;
  return bytes;
}

double downloadBytes(const RoundPayload& round) {
  if (round.downlinkEncoded)
    if (const std::optional<double> bytes = encodedBytes(round, sentBlockLayout(*round.blocks, round.reduced, nullptr)))
      return *bytes;
  double bytes = kValueBytes * static_cast<double>(round.serverState);
  const std::vector<LayerBlock>& blocks = *round.blocks;
  for (std::size_t b = 0; b < blocks.size(); ++b)
    if (round.reduced[b]) bytes += kParamBytes * static_cast<double>(blocks[b].size);
  if (secure(round)) bytes += secAggCost(round.secureClients, 0, round.secureWords).bytesReceivedPerClient;
  return bytes;
}

}  // namespace fedsilo
