// The simulated deployment's options (system.*, fl.deadline_seconds, eval.target_accuracy,
// eval.target_metric; docs/system.md): their declarations for --help and the INI file, and their
// reading into the typed SystemConfig, checked against the rest of the configuration.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/config.hpp"

namespace fedsilo {

// Every system-model option with its default (as text) and help.
std::vector<OptionSpec> systemOptions();

// Reads and checks the options from `values` (every option as text, defaults filled in) against `cfg`,
// whose other sections are read already; reads the files of file: specs. Throws ConfigError naming the
// option, its value and what was expected, or the setting it cannot be combined with.
SystemConfig readSystem(const std::map<std::string, std::string>& values, const ExperimentConfig& cfg);

}  // namespace fedsilo
