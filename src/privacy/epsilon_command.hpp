// `fedsilo epsilon`: the accountant from the command line, without MPI and without training.
#pragma once
#include <iosfwd>

namespace fedsilo {

// argv[0] is the command's own name ("epsilon"); the options follow. Prints `epsilon = X` and the
// optimal order (or, with --target_epsilon, the calibrated `noise_multiplier = Z`) on stdout.
// Returns the exit code: 0 ok (and for --help), 2 bad command line (one line on stderr).
int runEpsilonCommand(int argc, const char* const* argv);
// The same, writing to `out` and `err` (tests).
int runEpsilonCommand(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace fedsilo
