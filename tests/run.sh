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
ctest --output-on-failure -j "${FEDSILO_TEST_JOBS:-2}" "$@"
