#!/usr/bin/env bash
# fedsilo set-up: installs the Debian packages that are missing (as root), configures and builds.
# Idempotent: a second run installs nothing and rebuilds only what changed.
#   FEDSILO_BUILD_DIR   build directory (default: <repo>/build)
#   FEDSILO_WITH_SLURM  1 = also install munge + slurmctld/slurmd/slurm-client (for the SLURM test)
#   FEDSILO_JOBS        parallel build jobs (default 2)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${FEDSILO_BUILD_DIR:-$ROOT/build}
JOBS=${FEDSILO_JOBS:-2}

PKGS=(build-essential cmake ninja-build pkg-config ccache
      libopenmpi-dev openmpi-bin libeigen3-dev libopenblas-dev
      libhdf5-openmpi-dev hdf5-tools libboost-program-options-dev
      libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev
      dataset-fashion-mnist
      python3-h5py python3-matplotlib python3-pandas python3-scipy python3-pytest python3-yaml)
SLURM_PKGS=(munge slurmctld slurmd slurm-client)

missing_of() {
  local out=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || out+=("$p")
  done
  echo "${out[@]:-}"
}

apt_install() {  # apt_install [--no-install-recommends] pkgs...
  if [ "$(id -u)" != 0 ]; then
    echo "setup.sh: missing packages: $*; run as root (or install them) first" >&2
    exit 1
  fi
  if [ -z "${FEDSILO_APT_UPDATED:-}" ]; then
    apt-get update -qq
    export FEDSILO_APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

missing=$(missing_of "${PKGS[@]}")
if [ -n "$missing" ]; then
  echo "setup.sh: installing: $missing"
  # shellcheck disable=SC2086
  apt_install $missing
fi
if [ "${FEDSILO_WITH_SLURM:-0}" = 1 ]; then
  missing=$(missing_of "${SLURM_PKGS[@]}")
  if [ -n "$missing" ]; then
    echo "setup.sh: installing (SLURM test): $missing"
    # shellcheck disable=SC2086
    apt_install --no-install-recommends $missing
  fi
fi

launcher=()
# Relative paths in ccache's hashes: a second clone (CI) reuses the objects of the first.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT}
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
fi
cmake --build "$BUILD" -j "$JOBS"
echo "setup.sh: built $BUILD/fedsilo"
