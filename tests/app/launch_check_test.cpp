// app/launch_check: under SLURM the run must have as many MPI ranks as the job step has tasks (srun with
// the wrong MPI plugin starts N one-rank runs instead of one N-rank run). The end-to-end case (a real
// one-rank run with SLURM_NTASKS=2 exits 2) is in tests/integration/test_launch_check.sh.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "app/launch_check.hpp"
#include "core/error.hpp"

namespace fedsilo {
namespace {

LaunchEnvironment slurm(const std::string& tasks) {
  LaunchEnvironment env;
  env.slurmTasks = tasks;
  return env;
}

std::string messageOf(const LaunchEnvironment& env, int worldSize) {
  try {
    checkLaunch(env, worldSize);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(LaunchCheck, NothingToCheckOutsideSlurmOrWhenTheCountsAgree) {
  EXPECT_NO_THROW(checkLaunch(LaunchEnvironment{}, 1));
  EXPECT_NO_THROW(checkLaunch(LaunchEnvironment{}, 4));
  EXPECT_NO_THROW(checkLaunch(slurm("1"), 1));
  EXPECT_NO_THROW(checkLaunch(slurm("4"), 4));
  EXPECT_NO_THROW(checkLaunch(slurm(" 2\n"), 2));
}

TEST(LaunchCheck, OneRankOfSeveralTasksNamesBothAndThePlugin) {
  const std::string m = messageOf(slurm("2"), 1);
  EXPECT_NE(m.find("MPI started 1 rank but SLURM_NTASKS = 2"), std::string::npos) << m;
  EXPECT_NE(m.find("--mpi=pmix"), std::string::npos) << m;
  EXPECT_NE(m.find("FEDSILO_SRUN_MPI"), std::string::npos) << m;
}

TEST(LaunchCheck, OtherMismatchesNameBothCounts) {
  const std::string m = messageOf(slurm("2"), 4);
  EXPECT_NE(m.find("MPI started 4 ranks but SLURM_NTASKS = 2"), std::string::npos) << m;
  EXPECT_NE(messageOf(slurm("abc"), 1).find("SLURM_NTASKS = abc"), std::string::npos);
}

TEST(LaunchCheck, MpirunAndTheSwitchSkipTheCheck) {
  LaunchEnvironment mpirun = slurm("8");
  mpirun.openMpiLauncher = true;
  EXPECT_NO_THROW(checkLaunch(mpirun, 2));
  LaunchEnvironment ignored = slurm("8");
  ignored.ignored = true;
  EXPECT_NO_THROW(checkLaunch(ignored, 2));
}

TEST(LaunchCheck, ReadsTheEnvironment) {
  const char* keep = std::getenv("OMPI_COMM_WORLD_SIZE");
  const std::string kept = keep ? keep : "";
  ::setenv("SLURM_NTASKS", "3", 1);
  ::setenv("FEDSILO_IGNORE_SLURM_NTASKS", "1", 1);
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  LaunchEnvironment env = LaunchEnvironment::fromEnvironment();
  EXPECT_EQ(env.slurmTasks.value_or(""), "3");
  EXPECT_TRUE(env.ignored);
  EXPECT_FALSE(env.openMpiLauncher);
  ::setenv("FEDSILO_IGNORE_SLURM_NTASKS", "0", 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  env = LaunchEnvironment::fromEnvironment();
  EXPECT_FALSE(env.ignored);
  EXPECT_TRUE(env.openMpiLauncher);
  ::unsetenv("SLURM_NTASKS");
  ::unsetenv("FEDSILO_IGNORE_SLURM_NTASKS");
  EXPECT_FALSE(LaunchEnvironment::fromEnvironment().slurmTasks.has_value());
  if (keep) ::setenv("OMPI_COMM_WORLD_SIZE", kept.c_str(), 1);
  else ::unsetenv("OMPI_COMM_WORLD_SIZE");
}

}  // namespace
}  // namespace fedsilo
