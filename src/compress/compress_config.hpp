// Parsing and validation of the compression options (fl.compress, fl.compress_bits, fl.compress_ratio,
// fl.compress_tolerance, fl.compress_downlink, fl.error_feedback; the typed value is core/compress_config.hpp).
#pragma once
#include <map>
#include <string>

#include "core/compress_config.hpp"

namespace fedsilo {

// Whether this build has the ZFP backend (CMake option FEDSILO_ZFP).
bool zfpAvailable();

// Throws ConfigError with one line naming the option and the bad value.
void validateCompressConfig(const CompressConfig& c);

// A CompressConfig from option values keyed by their full names ("fl.compress", "fl.compress_bits", ...);
// options absent from the map keep their defaults. Parses and validates: every error is a ConfigError.
CompressConfig parseCompressConfig(const std::map<std::string, std::string>& options);

}  // namespace fedsilo
