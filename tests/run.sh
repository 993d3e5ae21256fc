#!/usr/bin/env bash
# Runs every test: set-up first (installs what is missing, incl. the SLURM parts, and builds), then
# ctest (unit, MPI at 1/2/4 ranks, integration, SLURM, analysis pytest), each under a TIMEOUT.
#   extra arguments go to ctest, e.g.  tests/run.sh -L unit   or   tests/run.sh -R invariance
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FEDSILO_WITH_SLURM=1 bash "$ROOT/jobs/setup.sh"
# shellcheck source=jobs/env.sh
source "$ROOT/jobs/env.sh"
BUILD=${FEDSILO_BUILD_DIR:-$ROOT/build}
cd "$BUILD"
# Tests labelled `long` (the 100-cycle fault soak, the slow-link measurements: ~20 min) run only with
# FEDSILO_TEST_LONG=1; `tests/run.sh -L long` runs just them.
skip_long=(-LE long)
if [ "${FEDSILO_TEST_LONG:-0}" = 1 ] || [[ " $* " == *" -L long "* ]]; then skip_long=(); fi
ctest --output-on-failure -j "${FEDSILO_TEST_JOBS:-2}" "${skip_long[@]}" "$@"
