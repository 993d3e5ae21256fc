#include "fl/aggregation.hpp"

#include <algorithm>

namespace fedsilo {

void applyWeightedMean(const ServerInput& in, const std::vector<LayerBlock>& blocks, std::vector<float>& global) {
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (in.accOffset[b] < 0 || !(in.blockWeightSum[b] > 0.0)) continue;
    const double inv = 1.0 / in.blockWeightSum[b];
    const Index off = in.accOffset[b];
    for (Index i = 0; i < blocks[b].size; ++i)
      global[static_cast<std::size_t>(blocks[b].offset + i)] = static_cast<float>(in.acc->value(off + i) * inv);
  }
}

void applyBetaMean(const ServerInput& in, const std::vector<LayerBlock>& blocks, double beta,
                   std::vector<float>& global) {
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (in.accOffset[b] < 0 || !(in.blockWeightSum[b] > 0.0)) continue;
    const double inv = 1.0 / in.blockWeightSum[b];
    for (Index i = 0; i < blocks[b].size; ++i) {
      float& g = global[static_cast<std::size_t>(blocks[b].offset + i)];
      const double mean = in.acc->value(static_cast<std::size_t>(in.accOffset[b] + i)) * inv;
      g = static_cast<float>((1.0 - beta) * static_cast<double>(g) + beta * mean);
    }
  }
}

void applyPrefixWeightedMean(const ServerInput& in, const std::vector<LayerBlock>& blocks, int split,
                             std::vector<float>& global) {
  ServerInput masked;
  masked.acc = in.acc;
  masked.accOffset = in.accOffset;
  masked.blockWeightSum = in.blockWeightSum;
  for (std::size_t b = static_cast<std::size_t>(std::max(split, 0)); b < masked.accOffset.size(); ++b)
    masked.accOffset[b] = -1;
  applyWeightedMean(masked, blocks, global);
}

}  // namespace fedsilo
