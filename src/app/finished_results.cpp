#include "app/finished_results.hpp"

#include "core/error.hpp"

namespace fedsilo {

OutputStart checkFinishedResults(const std::string& results, const std::string& checkpoint, bool haveResults,
                                 bool haveCheckpoint, bool resume, bool overwrite) {
  if (!haveResults) return OutputStart::Run;
  if (resume && !haveCheckpoint) return OutputStart::Finished;
  // A checkpoint next to a results file was written by a run that was allowed to replace it (only
  // --overwrite starts a run there), so resuming that run keeps its permission.
  if (overwrite || resume) return OutputStart::Run;
  throw ConfigError(fmt("output = ", results, ": holds a finished run's results; refusing to replace them: choose ",
                        "another --output, remove the file, or add --overwrite",
                        haveCheckpoint ? fmt(" (or --resume to continue the run of ", checkpoint, ")") : ""));
}

std::string finishedRunNote(const std::string& results, const std::string& checkpoint) {
  return fmt("--resume: ", results, " is a finished run's results file (no checkpoint ", checkpoint,
             "): nothing to do; the file is left as it is");
}

}  // namespace fedsilo
