#include "app/launch_check.hpp"

#include <cstdlib>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fedsilo {

LaunchEnvironment LaunchEnvironment::fromEnvironment() {
  LaunchEnvironment env;
  if (const char* tasks = std::getenv("SLURM_NTASKS")) env.slurmTasks = tasks;
  env.openMpiLauncher = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
  const char* ignore = std::getenv("FEDSILO_IGNORE_SLURM_NTASKS");
  env.ignored = ignore != nullptr && std::string(ignore) == "1";
  return env;
}

void checkLaunch(const LaunchEnvironment& env, int worldSize) {
  if (!env.slurmTasks || env.openMpiLauncher || env.ignored) return;
  const std::string tasks = trim(*env.slurmTasks);
  if (tasks == std::to_string(worldSize)) return;
  if (worldSize == 1)
    throw ConfigError(fmt("MPI started 1 rank but SLURM_NTASKS = ", tasks,
                          ": srun most likely started ", tasks, " separate one-rank runs because its MPI plugin does "
                          "not match this MPI library; launch with srun --mpi=pmix (jobs/*.sbatch: set "
                          "FEDSILO_SRUN_MPI; `srun --mpi=list` shows the plugins), or set "
                          "FEDSILO_IGNORE_SLURM_NTASKS=1 if this is meant"));
  throw ConfigError(fmt("MPI started ", worldSize, " ranks but SLURM_NTASKS = ", tasks,
                        ": the job step has another number of tasks than the run has ranks; launch with srun "
                        "(which starts one rank per task), or set FEDSILO_IGNORE_SLURM_NTASKS=1 if this is meant"));
}

}  // namespace fedsilo
