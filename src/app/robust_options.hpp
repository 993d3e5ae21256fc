// The robustness options (fl.aggregator and its parameters, attack.*; docs/robustness.md): their
// declarations for --help and the INI file, and their reading into the typed RobustConfig, checked
// against the rest of the configuration.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/config.hpp"

namespace fedsilo {

// Every robustness option with its default (as text) and help.
std::vector<OptionSpec> robustOptions();

// Reads and checks the robustness options from `values` (every option as text, defaults filled in)
// against `cfg`, whose other sections (privacy included) are read already. Throws ConfigError naming
// the option, its value and what was expected, or the feature it cannot be combined with.
RobustConfig readRobust(const std::map<std::string, std::string>& values, const ExperimentConfig& cfg);

}  // namespace fedsilo
