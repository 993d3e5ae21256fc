#!/usr/bin/env bash
# label: integration
# timeout: 300
# The start-up check of app/launch_check (docs/hpc.md, "Ranks and SLURM_NTASKS"), end to end: a run
# started as one MPI rank while SLURM_NTASKS says 2 (what srun leaves when its MPI plugin does not match
# the MPI library: N one-rank runs) exits 2 with one error line naming both numbers and the plugin, and
# leaves no results file; agreeing counts run; mpirun's own launches are not checked (mpirun -n 2 with
# SLURM_NTASKS=3 runs); FEDSILO_IGNORE_SLURM_NTASKS=1 switches the check off; --help and --dry-run are
# not runs and are never refused.
TEST_NAME=test_launch_check
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
A=("${TINY[@]}" --rounds 1)
unset SLURM_NTASKS FEDSILO_IGNORE_SLURM_NTASKS OMPI_COMM_WORLD_SIZE

run() { # run NAME [VAR=VALUE...] -- CMD...: RC, LOG
  local name=$1 vars=()
  shift
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  LOG=$WORK/$name.log
  RC=0
  env "${vars[@]}" "$@" >"$LOG" 2>&1 || RC=$?
}
expect_ok() { # NAME OUTPUT
  if [ "$RC" = 0 ] && h5_complete "$2"; then log "$1: runs"; else fail "$1: exit $RC: $(tail -2 "$LOG")"; fi
}

# One rank, SLURM_NTASKS=2: refused before any data is read or any file is written.
run one_of_two SLURM_NTASKS=2 -- "$FEDSILO_EXE" "${A[@]}" --output "$WORK/one_of_two/r.h5"
if [ "$RC" = 2 ] && grep -q 'fedsilo: error: MPI started 1 rank but SLURM_NTASKS = 2: .*srun --mpi=pmix' "$LOG"; then
  log "one rank, SLURM_NTASKS=2: exit 2, '$(grep -m1 'fedsilo: error' "$LOG" | cut -c1-90)...'"
else
  fail "one rank with SLURM_NTASKS=2: exit $RC, expected 2 with the launch error: $(tail -2 "$LOG")"
fi
[ "$(grep -c 'fedsilo: error' "$LOG")" = 1 ] || fail "one rank with SLURM_NTASKS=2: not exactly one error line"
[ -z "$(ls -A "$WORK/one_of_two" 2>/dev/null)" ] || fail "the refused run left files: $(ls "$WORK/one_of_two")"

# mpirun inside an allocation may start another number of ranks than the allocation has tasks.
run mpirun_in_allocation SLURM_NTASKS=3 -- "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${A[@]}" --output "$WORK/mpirun.h5"
expect_ok "mpirun -n 2 with SLURM_NTASKS=3 (mpirun inside an allocation)" "$WORK/mpirun.h5"
run agree SLURM_NTASKS=1 -- "$FEDSILO_EXE" "${A[@]}" --output "$WORK/agree.h5"
expect_ok "one rank with SLURM_NTASKS=1" "$WORK/agree.h5"
run ignored SLURM_NTASKS=2 FEDSILO_IGNORE_SLURM_NTASKS=1 -- "$FEDSILO_EXE" "${A[@]}" --output "$WORK/ignored.h5"
expect_ok "one rank with SLURM_NTASKS=2 and FEDSILO_IGNORE_SLURM_NTASKS=1" "$WORK/ignored.h5"
run help SLURM_NTASKS=2 -- "$FEDSILO_EXE" --help
[ "$RC" = 0 ] || fail "--help with SLURM_NTASKS=2: exit $RC"
run dry_run SLURM_NTASKS=2 -- "$FEDSILO_EXE" "${A[@]}" --dry-run
[ "$RC" = 0 ] || fail "--dry-run with SLURM_NTASKS=2: exit $RC"
finish
