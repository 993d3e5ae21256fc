#include "app/environment_help.hpp"

namespace fedsilo {

std::string environmentHelp() {
  return "Environment:\n"
         "  FEDSILO_ISA=avx512|avx2|generic  the float kernel set; default: the best one this CPU runs. A lower set\n"
         "                                   for tests, benchmarks or mixed clusters: all ranks run the lowest set\n"
         "                                   any of them asks for (printed as `kernels:`, stored as the results\n"
         "                                   file's `kernels`); an unknown name or a set this CPU lacks is exit 2.\n"
         "                                   All sets give the same bits; the code outside the kernels is compiled\n"
         "                                   for the build's instruction set, and what differs between the native\n"
         "                                   and portable builds is in docs/performance.md (Element-wise numerics).\n"
         "  FEDSILO_IGNORE_SLURM_NTASKS=1    do not stop (exit 2) when the rank count differs from SLURM_NTASKS\n"
         "                                   (checked in SLURM jobs not started by mpirun; docs/hpc.md).\n"
         "  FEDSILO_FAULT=KIND:rank=R,...    test-only fault injection (docs/hpc.md, Fault injection); never set it\n"
         "                                   for a real run.\n"
         "  SLURM_NTASKS                     read, never set: in a SLURM job that Open MPI's mpirun did not start\n"
         "                                   (no OMPI_COMM_WORLD_SIZE), a rank count other than SLURM_NTASKS is\n"
         "                                   exit 2 unless FEDSILO_IGNORE_SLURM_NTASKS=1.\n"
         "The job scripts in jobs/ read their own variables (FEDSILO_EXE, FEDSILO_RANKS, FEDSILO_OUT, ...;\n"
         "docs/hpc.md).\n";
}

}  // namespace fedsilo
