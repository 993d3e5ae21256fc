// Runs one experiment end to end on every rank: results file, progress lines, final summary,
// checkpoints (every checkpoint.every rounds and on SIGTERM/SIGUSR1) and --resume (docs/hpc.md).
#pragma once
#include "comm/communicator.hpp"
#include "core/config.hpp"

namespace fedsilo {

// Exit code of a run stopped by SIGTERM or SIGUSR1 after writing its checkpoint (EX_TEMPFAIL from
// sysexits.h: "try again later"): <output>.ckpt and <output>.partial are left; run again with --resume.
constexpr int kExitInterrupted = 75;

// Returns the process exit code: 0 on success, kExitInterrupted after a stop on a signal. Throws
// fedsilo::Error on failure (agreed on all ranks where the failure was seen by all of them).
int runExperiment(const ExperimentConfig& cfg, const Communicator& comm);

// --dry-run: the start-up checks of runExperiment without training or writing (docs/cli.md): the
// output's names, folder and lock, the checkpoint for --resume (verified), the data, partition,
// reference files, model and algorithm. Returns 0 or throws what the real run would (exit 2, 3, 1).
int dryRunExperiment(const ExperimentConfig& cfg, const Communicator& comm);

}  // namespace fedsilo
