// The ConfigError message parseArguments gives for `args`, or "" when they parse: what the option
// tests compare with the one-line error a user sees.
#pragma once
#include <string>
#include <vector>

#include "app/config_parser.hpp"
#include "core/error.hpp"

namespace fedsilo::test {

inline std::string parseError(const std::vector<std::string>& args) {
  try {
    parseArguments(args);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace fedsilo::test
