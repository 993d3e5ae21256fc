// Runs one experiment end to end on every rank: results file, progress lines, final summary.
#pragma once
#include "comm/communicator.hpp"
#include "core/config.hpp"

namespace fedsilo {

// Returns the process exit code (0 on success). Throws fedsilo::Error on failure (agreed on all ranks).
int runExperiment(const ExperimentConfig& cfg, const Communicator& comm);

}  // namespace fedsilo
