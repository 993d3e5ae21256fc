#!/usr/bin/env bash
# Strong and weak scaling with mpirun on a workstation (the jobs/scaling.sbatch of machines without
# SLURM), up to FEDSILO_SCALING_MAX ranks (default: the number of cores); weak scaling keeps the samples
# per client fixed (FEDSILO_WEAK_SAMPLES) while the clients grow with the ranks:
#   jobs/local/scaling.sh configs/X.ini [fedsilo options, e.g. --rounds 5]
# Writes out/scaling.csv: mode,ranks,clients,seconds_per_round (see jobs/scaling.sbatch for the knobs).
set -euo pipefail
FEDSILO_ROOT=${FEDSILO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=common.sh
source "$FEDSILO_ROOT/jobs/local/common.sh"
[ $# -ge 1 ] || fedsilo_die "usage: jobs/local/scaling.sh CONFIG.ini [fedsilo options...]"
[ -f "$1" ] || fedsilo_die "no configuration file $1"
fedsilo_env
launch_mpirun() {
  local p=$1
  shift
  mpirun -n "$p" "$@"
}
FEDSILO_SCALING_MAX=${FEDSILO_SCALING_MAX:-$(nproc)} fedsilo_scaling launch_mpirun "$@"
