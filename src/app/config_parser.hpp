// Command line + INI configuration (Boost.Program_options). The same names work in both places:
// `[train] lr = 0.05` in the file is `--train.lr 0.05` on the command line; the command line wins.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/config.hpp"

namespace fedsilo {

struct ParseOutcome {
  enum class Action { Run, Help, Version, DryRun } action = Action::Run;
  ExperimentConfig config;
  std::string text;  // help or version text
};

// Parses and validates. Throws ConfigError (exit code 2) with a one-line message naming the bad
// option and value and what was expected.
ParseOutcome parseCommandLine(int argc, const char* const* argv);
// Same, from an argument vector without the program name (tests).
ParseOutcome parseArguments(const std::vector<std::string>& args);
// The default of every experiment, algorithm and privacy option as text, keyed as in the resolved
// configuration (section.key; top-level keys bare).
std::map<std::string, std::string> optionDefaults();

}  // namespace fedsilo
