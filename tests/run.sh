#!/usr/bin/env bash
# Runs every test: set-up first (installs what is missing, incl. the SLURM parts, and builds), then
# ctest (unit, MPI at 1/2/4 ranks, integration, SLURM, analysis pytest), each under a TIMEOUT.
#   extra arguments go to ctest, e.g.  tests/run.sh -L unit   or   tests/run.sh -R invariance
#   FEDSILO_TEST_LONG=1      also the tests labelled `long` (~20 min)
#   FEDSILO_TEST_PORTABLE=1  then also the portable build (FEDSILO_NATIVE=OFF, in build-portable or
#                            FEDSILO_PORTABLE_BUILD_DIR) and its `unit` and `mpi` tests (~5 min; CI does)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FEDSILO_WITH_SLURM=1 bash "$ROOT/jobs/setup.sh"
# shellcheck source=jobs/env.sh
source "$ROOT/jobs/env.sh"
BUILD=${FEDSILO_BUILD_DIR:-$ROOT/build}
# Tests labelled `long` (the 100-cycle fault soak, the slow-link measurements: ~20 min) run only with
# FEDSILO_TEST_LONG=1; `tests/run.sh -L long` runs just them.
skip_long=(-LE long)
if [ "${FEDSILO_TEST_LONG:-0}" = 1 ] || [[ " $* " == *" -L long "* ]]; then skip_long=(); fi
(cd "$BUILD" && ctest --output-on-failure -j "${FEDSILO_TEST_JOBS:-2}" "${skip_long[@]}" "$@")
[ "${FEDSILO_TEST_PORTABLE:-0}" = 1 ] || exit 0

# The portable build compiles everything but the run-time-selected kernels without -march=native, so
# the compiler contracts and vectorises differently: the kernel tests against their double references,
# the optimizer's comparison with PyTorch (in ulps) and the rank-invariance tests are what can tell.
# The integration tests exercise the same numerics through the whole program and are left to the
# native build.
PORTABLE=${FEDSILO_PORTABLE_BUILD_DIR:-$ROOT/build-portable}
echo "tests/run.sh: the portable build (FEDSILO_NATIVE=OFF) in $PORTABLE, its unit and mpi tests"
FEDSILO_BUILD_DIR=$PORTABLE FEDSILO_NATIVE=OFF bash "$ROOT/jobs/setup.sh"
(cd "$PORTABLE" && ctest --output-on-failure -j "${FEDSILO_TEST_JOBS:-2}" -L '^(unit|mpi)$' "$@")
