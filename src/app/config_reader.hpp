// From the resolved option values (every experiment, algorithm and privacy key as text) to the typed
// ExperimentConfig: each value's type and range checked, and the rules between options, with one-line
// ConfigErrors that name the key, the value and what was expected.
#pragma once
#include <map>
#include <string>

#include "app/raw_values.hpp"
#include "core/config.hpp"

namespace fedsilo {

// The experiment's own options (not the algorithm's or privacy's), as a run of c.algorithm reads them.
void readExperimentOptions(const RawValues& raw, ExperimentConfig& c);

// The whole configuration; `roundsGiven`: whether the user set rounds (else a one-shot algorithm runs its
// own count). The algorithm may write its resolved defaults back into `values`.
ExperimentConfig toConfig(std::map<std::string, std::string>& values, bool roundsGiven);

}  // namespace fedsilo
