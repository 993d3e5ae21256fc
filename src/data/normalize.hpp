// Input normalisation (data.normalize = mean_std): x <- (x - mean_c) / std_c per channel, for the
// training and the test set alike, with the given constants (data.mean, data.std) or the statistics
// of the clients' own training samples (every client's train split, not validation or test
// samples): population mean and standard deviation per channel, computed in one fixed order, so
// every rank gets the same values. u8 data is summed in integers (exact).
#pragma once
#include <vector>

#include "core/config.hpp"
#include "data/dataset.hpp"

namespace fedsilo {

struct ChannelStats {
  std::vector<double> mean, std;  // per channel, in gathered units (u8: after u8Scale)
};

// Per-channel population mean and standard deviation over the samples of `lists` (a channel with
// zero variance gets std 1, so that it is only centred, as scikit-learn's StandardScaler does).
ChannelStats channelStats(const Dataset& ds, const std::vector<const IndexList*>& lists);

// Applies cfg.normalize to both sets of `data` (no-op for none). ConfigError when the data cannot be
// normalised (token ids) or data.mean/data.std do not match its channels.
void normalizeInputs(DataBundle& data, const DataConfig& cfg, const std::vector<const IndexList*>& trainLists);

}  // namespace fedsilo
