// What a run does when its output already holds a finished run's results file: a results file is
// only ever created complete (the partial file is renamed into place by the last step of a run), so an
// existing one is work that must not be lost without the user saying so (docs/hpc.md, "A finished
// results file").
#pragma once
#include <string>

namespace fedsilo {

// What the files at the output, as rank 0 sees them, and the command line's flags allow.
enum class OutputStart {
  Run,       // train: no results file there, or --overwrite, or --resume of an interrupted run
  Finished,  // --resume, a results file and no checkpoint: the run finished; change nothing, exit 0
};

// `results` names the results file in the messages; `checkpoint` its checkpoint. With a results file
// and no checkpoint, --resume is Finished. Otherwise a run without --overwrite (or --resume of a
// checkpoint, which a run allowed to write this output left) throws ConfigError (exit 2) naming the
// file and --overwrite. A run that replaces a finished file keeps it until its own results are
// complete (the rename).
OutputStart checkFinishedResults(const std::string& results, const std::string& checkpoint, bool haveResults,
                                 bool haveCheckpoint, bool resume, bool overwrite);

// The line a Finished start prints.
std::string finishedRunNote(const std::string& results, const std::string& checkpoint);

}  // namespace fedsilo
