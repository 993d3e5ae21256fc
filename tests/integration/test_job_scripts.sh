#!/usr/bin/env bash
# label: integration
# timeout: 60
# What the SLURM job scripts promise without running SLURM (tests/integration/test_slurm.sh runs them on a
# real one): no account or partition inside them (they come from the sbatch command line), logs in the
# repository's logs/ folder, exclusive nodes without hyper-threads for scaling, srun's MPI plugin only
# through fedsilo_srun_mpi (FEDSILO_SRUN_MPI: default pmix, a name, or empty for the site's default;
# anything else refused), and fedsilo_env: the FEDSILO_ENV_HOOK file sourced (also when it reads unset
# variables, as module(1) does; a missing one is exit 2), one BLAS thread, and Open MPI's root and
# oversubscription switches only outside SLURM jobs (root ones only as root).
TEST_NAME=test_job_scripts
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
SRC=$FEDSILO_SOURCE_DIR

# ---- the scripts' headers -----------------------------------------------------------------------------
# logs/ comes with the clone (SLURM does not create an --output folder); what the jobs write there is
# ignored by git.
git -C "$SRC" ls-files --error-unmatch logs/.gitignore >/dev/null 2>&1 ||
  fail "logs/.gitignore is not in the repository (a fresh clone has no logs/ folder for the jobs)"
git -C "$SRC" check-ignore -q logs/fedsilo-1.out || fail "git does not ignore the jobs' logs in logs/"
for s in "$SRC"/jobs/*.sbatch; do
  n=$(basename "$s")
  grep -qE '^#SBATCH +(--account|-A|--partition|-p)\b' "$s" && fail "$n hard-codes an account or partition"
  grep -qE '^#SBATCH +--output=logs/' "$s" || fail "$n does not write its log into logs/"
  grep -qE -- '--mpi=' "$s" && fail "$n names an srun MPI plugin itself instead of fedsilo_srun_mpi"
  grep -q 'fedsilo_srun_mpi' "$s" || fail "$n does not take srun's MPI plugin from fedsilo_srun_mpi"
  grep -q '^fedsilo_env$' "$s" || fail "$n does not call fedsilo_env"
done
for opt in --exclusive --hint=nomultithread; do
  grep -qE "^#SBATCH +$opt\$" "$SRC/jobs/scaling.sbatch" || fail "scaling.sbatch does not ask for $opt"
done

# ---- fedsilo_srun_mpi and fedsilo_env, each in a clean environment -------------------------------------
# in_env [VAR=VALUE...] -- CODE: bash CODE after sourcing jobs/local/common.sh as the job scripts do.
in_env() {
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  env -i PATH="$PATH" HOME="$HOME" FEDSILO_ROOT="$SRC" "${vars[@]}" \
    bash -c "set -euo pipefail; source \"\$FEDSILO_ROOT/jobs/local/common.sh\"; $2"
}
expect_out() { # WHAT EXPECTED ACTUAL
  [ "$3" = "$2" ] && log "$1: '$3'" || fail "$1: got '$3', expected '$2'"
}
expect_out "srun plugin, default" "--mpi=pmix" "$(in_env -- fedsilo_srun_mpi)"
expect_out "srun plugin, FEDSILO_SRUN_MPI=pmi2" "--mpi=pmi2" "$(in_env FEDSILO_SRUN_MPI=pmi2 -- fedsilo_srun_mpi)"
expect_out "srun plugin, FEDSILO_SRUN_MPI= (site default)" "" "$(in_env FEDSILO_SRUN_MPI= -- fedsilo_srun_mpi)"
RC=0
out=$(in_env 'FEDSILO_SRUN_MPI=pmix --x' -- fedsilo_srun_mpi 2>&1) || RC=$?
[ "$RC" = 2 ] && grep -q 'FEDSILO_SRUN_MPI=pmix --x: expected an srun MPI plugin name' <<<"$out" ||
  fail "FEDSILO_SRUN_MPI='pmix --x': exit $RC, expected 2 naming it: $out"

SHOW='fedsilo_env; echo "root=${OMPI_ALLOW_RUN_AS_ROOT:-}${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-}'
SHOW+=' over=${OMPI_MCA_rmaps_base_oversubscribe:-}${OMPI_MCA_ess_singleton_isolated:-} blas=$OPENBLAS_NUM_THREADS hook=${HOOK_SAW:-}"'
NOT_ROOT='id() { echo 1000; }; '  # as a user without root: `id -u` in jobs/env.sh sees 1000
if [ "$(id -u)" = 0 ]; then
  expect_out "fedsilo_env outside SLURM, as root" "root=11 over=11 blas=1 hook=" "$(in_env -- "$SHOW")"
fi
expect_out "fedsilo_env outside SLURM, not root" "root= over=11 blas=1 hook=" "$(in_env -- "$NOT_ROOT$SHOW")"
expect_out "fedsilo_env in a SLURM job" "root= over= blas=1 hook=" \
  "$(in_env SLURM_JOB_ID=7 OPENBLAS_NUM_THREADS=4 -- "$SHOW")"
cat >"$WORK/hook.sh" <<'EOS'
# A site hook: reads a variable that is not set (module(1) scripts do) and exports what the run needs.
if [ -n "$SOME_UNSET_VARIABLE" ]; then echo unexpected; fi
export HOOK_SAW=loaded
EOS
expect_out "fedsilo_env with FEDSILO_ENV_HOOK" "root= over= blas=1 hook=loaded" \
  "$(in_env SLURM_JOB_ID=7 FEDSILO_ENV_HOOK="$WORK/hook.sh" -- "$SHOW" | tail -1)"
RC=0
out=$(in_env SLURM_JOB_ID=7 FEDSILO_ENV_HOOK="$WORK/missing.sh" -- "$SHOW" 2>&1) || RC=$?
[ "$RC" = 2 ] && grep -q "FEDSILO_ENV_HOOK=$WORK/missing.sh: no such file" <<<"$out" ||
  fail "a missing FEDSILO_ENV_HOOK: exit $RC, expected 2 naming it: $out"

# ---- jobs/setup.sh takes no arguments: --help prints its variables, anything else is exit 2 -----------------
# (and FEDSILO_NATIVE is ON or OFF)
# Both before any install or build: the build directory it would use is never created.
RC=0
out=$(FEDSILO_BUILD_DIR="$WORK/setup_build" bash "$SRC/jobs/setup.sh" --help 2>&1) || RC=$?
[ "$RC" = 0 ] && grep -q FEDSILO_BUILD_DIR <<<"$out" && [ ! -e "$WORK/setup_build" ] ||
  fail "setup.sh --help: exit $RC, expected 0 with the variables and no build: $out"
RC=0
out=$(FEDSILO_BUILD_DIR="$WORK/setup_build" bash "$SRC/jobs/setup.sh" --jobs 4 2>&1) || RC=$?
[ "$RC" = 2 ] && grep -q "argument '--jobs': expected none" <<<"$out" && [ ! -e "$WORK/setup_build" ] ||
  fail "setup.sh --jobs 4: exit $RC, expected 2 naming the argument and no build: $out"
RC=0
out=$(FEDSILO_BUILD_DIR="$WORK/setup_build" FEDSILO_NATIVE=yes bash "$SRC/jobs/setup.sh" 2>&1) || RC=$?
[ "$RC" = 2 ] && grep -q "FEDSILO_NATIVE 'yes': expected ON or OFF" <<<"$out" && [ ! -e "$WORK/setup_build" ] ||
  fail "setup.sh with FEDSILO_NATIVE=yes: exit $RC, expected 2 naming the value and no build: $out"
log "setup.sh: --help, a stray argument and a bad FEDSILO_NATIVE stop before installing or building"
finish
