#!/usr/bin/env bash
# fedsilo set-up: installs the Debian packages that are missing (as root), configures and builds.
# Idempotent: a second run installs nothing and rebuilds only what changed.
#   FEDSILO_BUILD_DIR   build directory (default: <repo>/build)
#   FEDSILO_WITH_SLURM  1 = also install munge + slurmctld/slurmd/slurm-client (for the SLURM test)
#   FEDSILO_JOBS        parallel build jobs (default 2)
#   FEDSILO_BUILD_TARGETS  build only these targets (e.g. "fedsilo"; default: everything, tests included)
#   FEDSILO_NATIVE      ON or OFF: configure with -DFEDSILO_NATIVE=... (OFF: the portable build; default:
#                       CMake's, ON, or what the build directory already has)
#   CI                  true = configure with -DFEDSILO_WERROR=ON (warnings are errors)
# The package lists are in jobs/packages.sh.
set -euo pipefail
# The options are the environment variables above: any argument is a mistake (or a request for help)
# and must not start an install or a build.
if [ $# -gt 0 ]; then
  case $1 in
    -h | --help)
      sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
      exit 0 ;;
    *)
      echo "setup.sh: argument '$1': expected none (it is configured by the environment variables of --help)" >&2
      exit 2 ;;
  esac
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${FEDSILO_BUILD_DIR:-$ROOT/build}
JOBS=${FEDSILO_JOBS:-2}
case ${FEDSILO_NATIVE:-} in
  '' | ON | OFF) ;;
  *)
    echo "setup.sh: FEDSILO_NATIVE '$FEDSILO_NATIVE': expected ON or OFF" >&2
    exit 2 ;;
esac

# The package lists and the installer are shared with tests/integration/test_slurm.sh.
# shellcheck source=packages.sh
source "$ROOT/jobs/packages.sh"
fedsilo_install_missing setup.sh "${FEDSILO_PKGS[@]}" || exit 1
if [ "${FEDSILO_WITH_SLURM:-0}" = 1 ]; then
  fedsilo_install_missing "setup.sh (SLURM test)" --no-install-recommends "${FEDSILO_SLURM_PKGS[@]}" || exit 1
fi

launcher=()
# Relative paths in ccache's hashes: a second clone (CI) reuses the objects of the first.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT}
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
config=(-DCMAKE_BUILD_TYPE=Release "${launcher[@]}")
# CI (CI=true) builds with FEDSILO_WERROR: a warning fails the build there (configured every time, so
# that an existing build directory gets it too).
ci=0
if [ "${CI:-}" = true ]; then
  ci=1
  config+=(-DFEDSILO_WERROR=ON)
fi
configure=$ci
if [ -n "${FEDSILO_NATIVE:-}" ]; then
  config+=(-DFEDSILO_NATIVE="$FEDSILO_NATIVE")
  configure=1
fi
if [ ! -f "$BUILD/build.ninja" ] || [ "$configure" = 1 ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja "${config[@]}" >/dev/null
fi
targets=()
for t in ${FEDSILO_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$BUILD" -j "$JOBS" "${targets[@]}"
# The SLURM jobs write their logs into logs/ of the directory they are submitted from (the repository
# root); SLURM does not create the folder, and a job whose log folder is missing fails without a log.
mkdir -p "$ROOT/logs"
echo "setup.sh: built $BUILD/fedsilo"
