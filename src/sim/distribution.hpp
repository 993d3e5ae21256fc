// Distribution specs of the per-silo system quantities (docs/system.md): `constant:X` (or a bare X),
// `list:a,b,c` (client k takes item k mod n), `uniform:a,b`, `lognormal:mu,sigma` (exp of a normal),
// `file:PATH` (CSV rows `client,value`, one per client). Draws are keyed by (seed, client, quantity),
// never by rank or order, so every rank gives every client the same value.
#pragma once
#include <cstdint>
#include <string>

#include "core/system_config.hpp"

namespace fedsilo {

// The values a quantity may take: > min (openMin) or >= min.
struct ValueRange {
  double min = 0.0;
  bool openMin = true;
  bool admits(double x) const;
  std::string describe() const;  // "> 0", ">= 0"
};

// Parses `text`, the value of option `option`, for `clients` silos; reads a file: spec at once.
// ConfigError "option = text: ..." naming what was expected (a file's bad row: its path and line).
DistributionSpec parseDistribution(const std::string& option, const std::string& text, int clients,
                                   const ValueRange& range);

// The value of client `client`: a pure function of (spec, seed, client, quantity).
double drawValue(const DistributionSpec& spec, std::uint64_t seed, int client, std::uint64_t quantity);

}  // namespace fedsilo
