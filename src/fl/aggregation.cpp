#include "fl/aggregation.hpp"

#include <algorithm>

namespace fedsilo {

void applyAggregate(const ServerInput& in, Index offset, Index size, const double* target, std::vector<float>& global) {
  float* x = global.data() + offset;
  if (in.serverOptimizer) {
    in.serverOptimizer->step(offset, size, target, x);
    return;
  }
  for (Index i = 0; i < size; ++i) x[i] = static_cast<float>(target[i]);
}

namespace {

// Calls f(block, its weighted mean) for each reduced block with a positive weight sum, in block order.
template <class F>
void forEachBlockMean(const ServerInput& in, const std::vector<LayerBlock>& blocks, F&& f) {
  std::vector<double> mean;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (in.accOffset[b] < 0 || !(in.blockWeightSum[b] > 0.0)) continue;
    const double inv = 1.0 / in.blockWeightSum[b];
    const Index off = in.accOffset[b];
    mean.resize(static_cast<std::size_t>(blocks[b].size));
    for (Index i = 0; i < blocks[b].size; ++i) mean[static_cast<std::size_t>(i)] = in.acc->value(off + i) * inv;
    f(blocks[b], mean);
  }
}

}  // namespace

void applyWeightedMean(const ServerInput& in, const std::vector<LayerBlock>& blocks, std::vector<float>& global) {
  forEachBlockMean(in, blocks, [&](const LayerBlock& block, const std::vector<double>& mean) {
    applyAggregate(in, block.offset, block.size, mean.data(), global);
  });
}

std::vector<float> weightedMeanModel(const ServerInput& in, const std::vector<LayerBlock>& blocks,
                                     const std::vector<float>& global) {
  std::vector<float> model(global);
  forEachBlockMean(in, blocks, [&](const LayerBlock& block, const std::vector<double>& mean) {
    for (Index i = 0; i < block.size; ++i)
      model[static_cast<std::size_t>(block.offset + i)] = static_cast<float>(mean[static_cast<std::size_t>(i)]);
  });
  return model;
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
  masked.serverOptimizer = in.serverOptimizer;
  for (std::size_t b = static_cast<std::size_t>(std::max(split, 0)); b < masked.accOffset.size(); ++b)
    masked.accOffset[b] = -1;
  applyWeightedMean(masked, blocks, global);
}

}  // namespace fedsilo
