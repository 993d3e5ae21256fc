// A start-up check of how the run was launched: under SLURM, the number of MPI ranks must be the job
// step's task count. srun with an MPI plugin that does not match the MPI library (e.g. --mpi=none, or
// a site default other than the one Open MPI was built for) starts every task as a separate one-rank
// MPI run: N copies of the same experiment, each writing the same files. This check stops them.
#pragma once
#include <optional>
#include <string>

namespace fedsilo {

// What the launcher left in the environment, read before MPI starts.
struct LaunchEnvironment {
  std::optional<std::string> slurmTasks;  // SLURM_NTASKS as set, if at all
  // Started by Open MPI's own launcher (mpirun sets OMPI_COMM_WORLD_SIZE for its ranks): inside a SLURM
  // allocation it may rightly start another number of ranks than SLURM_NTASKS, so there is nothing to check.
  bool openMpiLauncher = false;
  // FEDSILO_IGNORE_SLURM_NTASKS=1: a launcher this check does not know (docs/hpc.md).
  bool ignored = false;

  static LaunchEnvironment fromEnvironment();
};

// Throws ConfigError (exit 2), naming both numbers and the likely cause, when SLURM_NTASKS is set and
// differs from `worldSize`, unless the run was started by mpirun or the check is switched off.
// Identical on every rank (every rank reads the same variables), so it may run in a coordinated region.
void checkLaunch(const LaunchEnvironment& env, int worldSize);

}  // namespace fedsilo
