// Where the option values come from, and which wins: the command line over the INI file's sections
// scoped to the algorithm that runs (`[train @ pfedme]`), over its plain keys and sections, over the
// defaults. A scoped section lets one file hold a protocol whose algorithms need different settings
// (PLayer-FL's FashionMNIST protocol trains with Adam, but pfedme's update is its own inner SGD).
#pragma once
#include <boost/program_options.hpp>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace fedsilo {

// Option values as text, by key ("train.lr").
using OptionTexts = std::map<std::string, std::string>;

// One `[section @ algorithm, ...]` of the INI file: `section`'s keys for the named algorithms only.
struct ScopedSection {
  std::string header;                   // as written between the brackets, for error messages
  std::size_t line = 0;                 // the header's line in the file
  std::string section;                  // the section its keys belong to ("train")
  std::vector<std::string> algorithms;  // the algorithms it applies to
  OptionTexts values;                  // "section.key" -> value as written
};

// The INI file's options as text: its plain keys and sections, and its algorithm-scoped sections.
struct ConfigFileValues {
  std::string path;
  OptionTexts plain;
  std::vector<ScopedSection> scoped;

  // The file's values when `algorithm` runs: the plain ones, overridden by the sections scoped to it.
  OptionTexts forAlgorithm(const std::string& algorithm) const;
};

// The section scoped to `algorithm` that the ConfigError `message` is about: the one holding the key
// the message starts with ("train.lr = ...", "train.lr: ..."), unless the command line gives that key; else, when
// `orFirst`, the first section scoped to `algorithm`; else none.
const ScopedSection* scopeOfError(const ConfigFileValues& file, const OptionTexts& commandLine,
                                  const std::string& algorithm, const std::string& message, bool orFirst);

// `message` prefixed with the file and section `s` (its header and line).
ConfigError scopedError(const ConfigFileValues& file, const ScopedSection& s, const std::string& message);

// Reads the INI file `path` (readConfigText's checks) and parses it with Boost's INI rules against
// `inFile`. A section header holding '@' is scoped: `[SECTION @ ALGORITHM, ...]`, SECTION one of
// `scopableSections`, every ALGORITHM a registered one, no section scoped twice to one algorithm; its
// keys are checked against `inFile` as under [SECTION]. Throws ConfigError naming the file, and for a
// scoped section its header and line, the bad key or name and what was expected.
ConfigFileValues readConfigFile(const std::string& path, const boost::program_options::options_description& inFile,
                                const std::set<std::string>& scopableSections);

// The long names of `options`, in their order (what an unrecognised option is compared with).
std::vector<std::string> optionNames(const boost::program_options::options_description& options);

// Stores the command line into `vm`. A later occurrence of an option overrides an earlier one
// (scripts append overrides); in the INI file a duplicated key stays an error.
void storeCommandLine(int argc, const char* const* argv, const boost::program_options::options_description& all,
                      boost::program_options::variables_map& vm);

// The options of `defaults` given on the command line (stored in `vm`), as text.
OptionTexts commandLineValues(const boost::program_options::variables_map& vm,
                               const std::vector<std::pair<std::string, std::string>>& defaults);

// Every option of `defaults`: the command line's value, else the file's, else the default.
OptionTexts layeredValues(const std::vector<std::pair<std::string, std::string>>& defaults,
                           const OptionTexts& file, const OptionTexts& commandLine);

}  // namespace fedsilo
