#include "app/option_sources.hpp"

#include <algorithm>
#include <sstream>

#include "app/config_file.hpp"
#include "app/option_suggestion.hpp"
#include "core/strings.hpp"
#include "fl/algorithm.hpp"

namespace po = boost::program_options;

namespace fedsilo {

namespace {

// A scoped section as found in the text, before its header is read.
struct ScopedText {
  std::string header;
  std::size_t line;
  std::string body;
};

// What Boost's INI parser reads of a line: the text before '#', blanks trimmed.
std::string iniContent(const std::string& line) { return trim(line.substr(0, line.find('#'))); }

// The plain part of `text`, where the lines of the scoped sections are left blank, and the scoped
// sections into `scoped`. A scoped section runs from its header to the next section header.
std::string splitScopedSections(const std::string& text, std::vector<ScopedText>& scoped) {
  std::istringstream in(text);
  std::string plain, line;
  std::size_t number = 0;
  bool inScoped = false;
  while (std::getline(in, line)) {
    ++number;
    const std::string content = iniContent(line);
    const bool header = content.size() >= 2 && content.front() == '[' && content.back() == ']';
    if (header) inScoped = content.find('@') != std::string::npos;
    if (header && inScoped) {
      scoped.push_back({content.substr(1, content.size() - 2), number, ""});
    } else if (inScoped) {
      scoped.back().body += line + '\n';
    }
    plain += inScoped ? std::string("\n") : line + '\n';
  }
  return plain;
}

// The line of INI `text` (1 = its first) that sets `key` as Boost reads it (a "name = value" line, the
// name prefixed by the section it is under), or 0.
std::size_t lineOfKey(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line, section;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const std::string content = iniContent(line);
    if (content.size() >= 2 && content.front() == '[' && content.back() == ']') {
      section = content.substr(1, content.size() - 2);
      continue;
    }
    const std::size_t equals = content.find('=');
    if (equals == std::string::npos) continue;
    const std::string name = trim(content.substr(0, equals));
    if ((section.empty() ? name : section + "." + name) == key) return number;
  }
  return 0;
}

// The keys of INI `text` as text, checked by Boost against `inFile` (repeated keys or a broken line
// throw po::error). An unknown key is a ConfigError "<path>:<line>: unrecognised option 'KEY'" with
// the nearest known key; `firstLine` is the file's line of the text's first, `scope` the header of the
// scoped section the text is ("" for the plain part), named after the line as "[train @ pfedme]: ".
OptionTexts parseIni(const std::string& text, const po::options_description& inFile, const std::string& path,
                     std::size_t firstLine, const std::string& scope = "") {
  std::istringstream in(text);
  po::variables_map vm;
  try {
    po::store(po::parse_config_file(in, inFile, false), vm);
  } catch (const po::unknown_option& e) {
    const std::size_t line = lineOfKey(text, e.get_option_name());
    throw ConfigError(fmt(path, line > 0 ? fmt(":", firstLine + line - 1) : std::string(), ": ",
                          scope.empty() ? std::string() : fmt("[", printableExcerpt(scope, 80), "]: "),
                          unrecognisedOption(e.get_option_name(), optionNames(inFile))));
  }
  OptionTexts values;
  for (const auto& [key, value] : vm)
    if (!value.defaulted()) values[key] = value.as<std::string>();
  return values;
}

std::string algorithmNames() {
  std::string names;
  for (const auto& e : algorithmRegistry()) names += (names.empty() ? "" : ", ") + std::string(e.name);
  return names;
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// The section and algorithms of a scoped header, checked: `where` starts every error message.
void readScopedHeader(const std::string& where, const std::set<std::string>& scopableSections, ScopedSection& s) {
  const std::size_t at = s.header.find('@');
  s.section = trim(s.header.substr(0, at));
  s.algorithms = splitList(s.header.substr(at + 1));
  if (!scopableSections.count(s.section))
    throw ConfigError(fmt(where, "section '", s.section, "' cannot be scoped to an algorithm: expected [SECTION @ ",
                          "ALGORITHM, ...] with SECTION one of ", joined(scopableSections),
                          " (an algorithm's own section applies only when it runs)"));
  if (s.algorithms.empty()) throw ConfigError(fmt(where, "expected [SECTION @ ALGORITHM, ...] naming an algorithm"));
  for (const auto& name : s.algorithms)
    if (!findAlgorithm(name))
      throw ConfigError(fmt(where, "unknown algorithm '", name, "', expected one of ", algorithmNames()));
}

// `text`'s scoped section read: header checked, keys checked against `inFile` as under [SECTION].
ScopedSection readScopedSection(const std::string& path, const ScopedText& text, const po::options_description& inFile,
                                const std::set<std::string>& scopableSections) {
  ScopedSection s;
  s.header = text.header;
  s.line = text.line;
  const std::string where = fmt("config = ", path, ": [", printableExcerpt(s.header, 80), "] (line ", s.line, "): ");
  readScopedHeader(where, scopableSections, s);
  try {
    s.values = parseIni("[" + s.section + "]\n" + text.body, inFile, path, s.line, s.header);
  } catch (const po::error& e) {
    throw ConfigError(where + printableExcerpt(e.what(), 160));
  }
  return s;
}

// No section is scoped twice to one algorithm (which of the two would win is not obvious).
void requireDistinctScopes(const std::string& path, const std::vector<ScopedSection>& scoped) {
  std::map<std::pair<std::string, std::string>, std::size_t> firstLine;
  for (const auto& s : scoped)
    for (const auto& algorithm : s.algorithms) {
      const auto [it, fresh] = firstLine.emplace(std::make_pair(s.section, algorithm), s.line);
      if (!fresh)
        throw ConfigError(fmt("config = ", path, ": [", s.header, "] (line ", s.line, "): section ", s.section,
                              " is scoped to ", algorithm, " already at line ", it->second,
                              "; expected one such section (merge them)"));
    }
}

}  // namespace

std::vector<std::string> optionNames(const po::options_description& options) {
  std::vector<std::string> names;
  for (const auto& option : options.options()) names.push_back(option->long_name());
  return names;
}

OptionTexts ConfigFileValues::forAlgorithm(const std::string& algorithm) const {
  OptionTexts values = plain;
  for (const auto& s : scoped)
    for (const auto& name : s.algorithms)
      if (name == algorithm)
        for (const auto& [key, value] : s.values) values[key] = value;
  return values;
}

const ScopedSection* scopeOfError(const ConfigFileValues& file, const OptionTexts& commandLine,
                                  const std::string& algorithm, const std::string& message, bool orFirst) {
  const ScopedSection* first = nullptr;
  for (const auto& s : file.scoped) {
    if (std::find(s.algorithms.begin(), s.algorithms.end(), algorithm) == s.algorithms.end()) continue;
    if (!first) first = &s;
    for (const auto& [key, value] : s.values)
      if (!commandLine.count(key) && message.rfind(key, 0) == 0 && message.find_first_of(" :", key.size()) == key.size())
        return &s;
  }
  return orFirst ? first : nullptr;
}

ConfigError scopedError(const ConfigFileValues& file, const ScopedSection& s, const std::string& message) {
  return ConfigError(fmt("config = ", file.path, ": [", s.header, "] (line ", s.line, "): ", message));
}

ConfigFileValues readConfigFile(const std::string& path, const po::options_description& inFile,
                                const std::set<std::string>& scopableSections) {
  ConfigFileValues file;
  file.path = path;
  std::vector<ScopedText> scopedTexts;
  const std::string plain = splitScopedSections(readConfigText(path), scopedTexts);
  // Boost's messages quote the offending line: they are cut and made printable before they reach the
  // one error line.
  try {
    file.plain = parseIni(plain, inFile, path, 1);
  } catch (const po::error& e) {
    throw ConfigError(fmt("config = ", path, ": ", printableExcerpt(e.what(), 160)));
  }
  for (const auto& text : scopedTexts) file.scoped.push_back(readScopedSection(path, text, inFile, scopableSections));
  requireDistinctScopes(path, file.scoped);
  return file;
}

void storeCommandLine(int argc, const char* const* argv, const po::options_description& all, po::variables_map& vm) {
  po::parsed_options parsed = po::command_line_parser(argc, argv)
                                  .options(all)
                                  .positional(po::positional_options_description())
                                  .style(po::command_line_style::unix_style)
                                  .run();
  std::vector<po::option> lastOfEach;
  for (auto it = parsed.options.rbegin(); it != parsed.options.rend(); ++it) {
    bool seen = false;
    for (const auto& kept : lastOfEach) seen = seen || kept.string_key == it->string_key;
    if (!seen) lastOfEach.insert(lastOfEach.begin(), *it);
  }
  parsed.options = lastOfEach;
  po::store(parsed, vm);
}

OptionTexts commandLineValues(const po::variables_map& vm,
                               const std::vector<std::pair<std::string, std::string>>& defaults) {
  OptionTexts values;
  for (const auto& [key, def] : defaults)
    if (vm.count(key) && !vm[key].defaulted()) values[key] = vm[key].as<std::string>();
  return values;
}

OptionTexts layeredValues(const std::vector<std::pair<std::string, std::string>>& defaults,
                           const OptionTexts& file, const OptionTexts& commandLine) {
  OptionTexts values;
  for (const auto& [key, def] : defaults) {
    const auto given = commandLine.find(key);
    const auto written = file.find(key);
    values[key] = given != commandLine.end() ? given->second : written != file.end() ? written->second : def;
  }
  return values;
}

}  // namespace fedsilo
