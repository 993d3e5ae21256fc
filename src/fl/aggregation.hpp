// Server-side aggregation of the driver's exact reduction (ServerInput: per reduced block the sum
// sum_k w_kb v_kb and the weight sum sum_k w_kb), shared by the algorithms' server steps.
#pragma once
#include <vector>

#include "fl/algorithm.hpp"

namespace fedsilo {

// Sets parameters [offset, offset + size) of the global model to the aggregate target[0..size), or,
// with a server optimizer (in.serverOptimizer), moves them one optimizer step towards it (the
// pseudo-gradient target - w). Every server step that sets the global model to an aggregate goes
// through here, so that fl.server_optimizer applies to it.
void applyAggregate(const ServerInput& in, Index offset, Index size, const double* target, std::vector<float>& global);

// Sets each reduced block with a positive weight sum to the weighted mean (FedAvg's server step);
// blocks nobody sent keep their value.
void applyWeightedMean(const ServerInput& in, const std::vector<LayerBlock>& blocks, std::vector<float>& global);

// applyWeightedMean's result as if there were no server optimizer (a copy of `global` with the
// weighted mean, rounded to float, in place of each block that has one): for a server step that
// builds its own aggregate from the mean (FedFa under client-level DP) before applyAggregate.
std::vector<float> weightedMeanModel(const ServerInput& in, const std::vector<LayerBlock>& blocks,
                                     const std::vector<float>& global);

// w <- (1 - beta) w + beta * (weighted mean) for every reduced block with a positive weight sum
// (pFedMe's server mixing).
void applyBetaMean(const ServerInput& in, const std::vector<LayerBlock>& blocks, double beta,
                   std::vector<float>& global);

// applyWeightedMean restricted to blocks [0, split): blocks >= split are left untouched
// (bit-identical), whatever was reduced for them (PLayer-FL's federated prefix).
void applyPrefixWeightedMean(const ServerInput& in, const std::vector<LayerBlock>& blocks, int split,
                             std::vector<float>& global);

}  // namespace fedsilo
