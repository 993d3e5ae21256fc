# Sourced by fedsilo's scripts and by users before `mpirun ... build/fedsilo`: one BLAS thread per rank
# (ranks are the parallelism), and, outside SLURM jobs only, what Open MPI's mpirun needs on a
# workstation or in a container: oversubscription (more ranks than cores) and, as root only, permission
# to run as root. A SLURM job sets neither: srun starts the ranks, cluster jobs do not run as root, and
# the allocation decides the slots (docs/hpc.md).
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
if [ -z "${SLURM_JOB_ID:-}" ]; then
  export OMPI_MCA_rmaps_base_oversubscribe=1
  if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
fi
