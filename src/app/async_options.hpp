// The asynchronous algorithms' protocol options (fl.max_concurrency, eval.every_seconds; docs/async.md):
// read into the configuration and checked against the rest of it. An asynchronous algorithm (fedasync,
// fedbuff, fedcompass) has no rounds, so the settings that need them are refused with it, and the asynchronous
// options are refused with an algorithm that runs synchronous rounds.
#pragma once
#include <map>
#include <string>

#include "core/config.hpp"

namespace fedsilo {

// Reads fl.max_concurrency and eval.every_seconds into `cfg` (every other section read already) and
// checks the combination. Throws ConfigError naming the option, its value and what was expected.
void readAsyncOptions(const std::map<std::string, std::string>& values, ExperimentConfig& cfg);

}  // namespace fedsilo
