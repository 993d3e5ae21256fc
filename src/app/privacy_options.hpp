// The privacy.* options (docs/privacy.md): their declarations for --help and the INI file, and their
// reading into the typed PrivacyConfig, checked against the rest of the configuration.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/config.hpp"

namespace fedsilo {

// Every privacy option with its default (as text) and help.
std::vector<OptionSpec> privacyOptions();

// Reads and checks the privacy options from `values` (every option as text, defaults filled in)
// against `cfg`, whose other sections are read already. A client-level target epsilon is calibrated
// here (z for the planned rounds at q = fl.clients_per_round / clients); a sample-level one needs the
// clients' sizes and is calibrated at start-up (fl/sample_privacy.hpp). Throws ConfigError naming the
// option, its value and what was expected, or the unsupported algorithm or model.
PrivacyConfig readPrivacy(const std::map<std::string, std::string>& values, const ExperimentConfig& cfg);

}  // namespace fedsilo
