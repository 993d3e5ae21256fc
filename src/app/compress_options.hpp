// The compression options (fl.compress and its parameters; docs/compression.md): their declarations for
// --help and the INI file, and their reading into the typed CompressConfig, checked against the rest of
// the configuration.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/config.hpp"

namespace fedsilo {

// Every compression option with its default (as text; empty: the method's own default) and help.
std::vector<OptionSpec> compressOptions();

// Reads and checks the compression options from `values` (every option as text, defaults filled in)
// against `cfg`, whose other sections (privacy and robustness included) are read already. Throws
// ConfigError naming the option, its value and what was expected, or what it cannot run with.
CompressConfig readCompress(const std::map<std::string, std::string>& values, const ExperimentConfig& cfg);

}  // namespace fedsilo
