// Whether a checkpoint's configuration lets this run resume from it (--resume).
#pragma once
#include <map>
#include <string>

namespace fedsilo {

// The options this run sets that the checkpoint's configuration does not name, key -> value: the
// checkpoint was written by a fedsilo from before the option existed, and this run uses the option's
// default, which is how such a fedsilo behaved.
struct ResumeCheck {
  std::map<std::string, std::string> predatedOptions;
};

// Compares the resolved configuration saved in the checkpoint (`saved`, INI text) with this run's
// (`now`), ignoring the keys a resumed run may change (output path, checkpoint.every, what is shown
// while it runs). `defaults` maps every option (section.key) to its default as text. Throws
// ConfigError naming the first option whose value differs, the first option of this run that the
// checkpoint lacks and that is not at its default, or the first option of the checkpoint this run
// lacks. `path` names the checkpoint in the messages.
ResumeCheck checkResumable(const std::string& saved, const std::string& now,
                           const std::map<std::string, std::string>& defaults, const std::string& path);

}  // namespace fedsilo
