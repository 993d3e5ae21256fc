# Sourced by fedsilo's scripts and by users before `mpirun ... build/fedsilo`: one BLAS thread per rank
# (ranks are the parallelism), and, outside SLURM jobs only, what Open MPI's mpirun needs on a
# workstation or in a container: oversubscription (more ranks than cores) and, as root only, permission
# to run as root. A SLURM job sets neither: srun starts the ranks, cluster jobs do not run as root, and
# the allocation decides the slots (docs/hpc.md). A fedsilo started without mpirun (--help, --dry-run,
# one-rank runs) runs as an isolated singleton: Open MPI would otherwise spawn a daemon for it, which
# costs about 0.4 s and that process needs none of (it starts no other processes). Isolated singletons
# share one session folder under TMPDIR: start two side by side only with a TMPDIR each.
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
if [ -z "${SLURM_JOB_ID:-}" ]; then
  export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_ess_singleton_isolated=${OMPI_MCA_ess_singleton_isolated:-1}
  if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
fi
