#!/usr/bin/env bash
# One fedsilo experiment on a workstation with mpirun (the jobs/run.sbatch of machines without SLURM):
#   jobs/local/run.sh configs/X.ini [fedsilo options...]        FEDSILO_RANKS ranks (default 2)
# (FEDSILO_MPIRUN_ARGS: more mpirun options, e.g. "--bind-to none" for runs side by side, docs/hpc.md).
# Ctrl-C or `kill -TERM <pid of this script>`: the run finishes its round, writes <output>.ckpt and
# exits 75; run the same command again to resume (--resume is added when <output>.ckpt exists).
set -euo pipefail
FEDSILO_ROOT=${FEDSILO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=common.sh
source "$FEDSILO_ROOT/jobs/local/common.sh"
[ $# -ge 1 ] || fedsilo_die "usage: jobs/local/run.sh CONFIG.ini [fedsilo options...]"
CONFIG=$1
shift
[ -f "$CONFIG" ] || fedsilo_die "no configuration file $CONFIG"
fedsilo_env
EXE=$(fedsilo_exe)
fedsilo_mpirun_command
OUTPUT=$(fedsilo_output "$CONFIG" "$@")
mkdir -p "$(dirname "$OUTPUT")"
RESUME=$(fedsilo_resume_args "$OUTPUT")
STAMP=$(fedsilo_run_stamp "$OUTPUT")
# shellcheck disable=SC2086
fedsilo_run_forwarding "${MPIRUN[@]}" "$EXE" --config "$CONFIG" "$@" $RESUME
fedsilo_mpirun_status "$OUTPUT" "$STAMP"
exit "$RUN_RC"
