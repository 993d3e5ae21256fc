// Helpers shared by the test executables.
#pragma once
#include <string>
#include <vector>

#include "core/config.hpp"

namespace fedsilo::test {

// A fresh, empty temporary directory under $TMPDIR (default /tmp) for small test files, removed with
// everything in it when the test program exits.
std::string tempDir(const std::string& tag);
// Source tree root (FEDSILO_SOURCE_DIR set by ctest; falls back to the compile-time path).
std::string sourceDir();

// parseArguments(args) plus "--rounds N": N = iterativeRounds for an iterative algorithm, else the
// round count the one-shot algorithm's registry entry (AlgorithmEntry::oneShotRounds) declares for
// this configuration. `args` names the algorithm (--algorithm X) and no --rounds.
ExperimentConfig parseWithRegistryRounds(std::vector<std::string> args, int iterativeRounds);

}  // namespace fedsilo::test
