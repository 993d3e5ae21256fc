// Reads a finished FedAvg results file as the reference of α-FedAvg's α search (the paper computes
// E_T = Σ_k (n_k/n) a_k from the final FedAvg model's per-client accuracies and runs Algorithm 1 on
// those accuracies). Serial HDF5 read of /summary/client_accuracy and /clients/num_train; every rank
// may call it on the same file (read-only).
#pragma once
#include <string>
#include <vector>

#include "core/config.hpp"

namespace fedsilo {

struct ReferenceResults {
  std::vector<double> accuracy;  // /summary/client_accuracy [K]
  std::vector<double> numTrain;  // /clients/num_train [K]
  double efficiency = 0.0;       // Σ n_k a_k / Σ n_k over the finite accuracies
};

// Throws ConfigError naming `path` when the file cannot be read or lacks the datasets.
ReferenceResults readReferenceResults(const std::string& path);
double readEfficiencyTarget(const std::string& path);

// If alpha_fedavg.reference names a file, sets alpha_fedavg.reference_accuracy (the K accuracies) and,
// when empty, alpha_fedavg.efficiency_target (its efficiency) in `algo`. No-op otherwise. Call it after
// the options are collected and before the algorithm is built or validated (makeAlgorithm).
void resolveAlphaFedAvgReference(OptionValues& algo);

}  // namespace fedsilo
