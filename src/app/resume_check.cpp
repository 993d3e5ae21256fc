#include "app/resume_check.hpp"

#include <sstream>

#include "core/error.hpp"

namespace fedsilo {

namespace {

// The resolved configuration as section.key -> value, without the keys a resumed run may change:
// the output path (the checkpoint was found through it anyway), how often to checkpoint, and what is
// shown while it runs (the JSON Lines stream is rebuilt from the checkpoint on resume).
std::map<std::string, std::string> resumeRelevant(const std::string& ini) {
  std::map<std::string, std::string> out;
  std::istringstream in(ini);
  std::string line, section;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      section = line.substr(1, line.find(']') - 1);
      continue;
    }
    const auto eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    const std::string key = (section.empty() ? "" : section + ".") + line.substr(0, eq);
    if (key == "output" || key == "checkpoint.every" || key == "output.jsonl" || key == "output.progress_seconds")
      continue;
    out[key] = line.substr(eq + 3);
  }
  return out;
}

}  // namespace

ResumeCheck checkResumable(const std::string& saved, const std::string& now,
                           const std::map<std::string, std::string>& defaults, const std::string& path) {
  const auto then = resumeRelevant(saved), mine = resumeRelevant(now);
  ResumeCheck check;
  if (then == mine) return check;
  for (const auto& [k, v] : then) {
    const auto it = mine.find(k);
    const std::string value = it == mine.end() ? "(not set)" : it->second;
    if (value != v)
      throw ConfigError(fmt("--resume: ", path, " was written with ", k, " = ", v, ", this run has ", k, " = ", value,
                            "; resume with the same configuration, or remove the checkpoint to start over"));
  }
  for (const auto& [k, v] : mine) {
    if (then.count(k)) continue;
    const auto def = defaults.find(k);
    if (def == defaults.end() || def->second != v)
      throw ConfigError(fmt("--resume: ", path, " was written without option ", k, " (by a fedsilo from before it, "
                            "which behaved as its default", def == defaults.end() ? "" : " " + k + " = " + def->second,
                            "); this run has ", k, " = ", v, ": resume with the default, or remove the checkpoint to "
                            "start over"));
    check.predatedOptions.emplace(k, v);
  }
  return check;
}

}  // namespace fedsilo
