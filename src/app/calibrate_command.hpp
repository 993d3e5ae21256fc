// `fedsilo calibrate [run options]`: measures this machine's training rate for the configured model,
// dataset, batch and optimizer (one rank, one core) and prints the system.compute_gflops that makes
// the simulated compute time equal to the measured one (docs/system.md, "Anchoring the rate").
#pragma once

namespace fedsilo {

// argv[0] is "calibrate"; the rest are run options (--model, --dataset, --train.batch, --config ...).
// Returns the exit code: 0, 2 for a configuration error, 3 for a data error, 1 otherwise.
int runCalibrateCommand(int argc, char** argv);

}  // namespace fedsilo
