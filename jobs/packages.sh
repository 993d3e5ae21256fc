# shellcheck shell=bash disable=SC2034 # the lists are used by the scripts that source this file
# The Debian packages fedsilo needs, and one way to install the missing ones. Sourced (not run) by
# jobs/setup.sh and tests/integration/test_slurm.sh, so that both use the same package lists.

FEDSILO_PKGS=(build-essential cmake ninja-build pkg-config ccache
              libopenmpi-dev openmpi-bin libeigen3-dev libopenblas-dev
              libhdf5-openmpi-dev hdf5-tools libboost-program-options-dev
              libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev
              dataset-fashion-mnist
              python3-numpy python3-h5py python3-matplotlib python3-scipy python3-pytest python3-yaml
              strace iproute2 universal-ctags)
# The SLURM test's cluster: munged, slurmctld, slurmd and the client commands (sbatch, squeue, ...).
FEDSILO_SLURM_PKGS=(munge slurmctld slurmd slurm-client)

# fedsilo_missing_pkgs PKG...: prints the packages dpkg does not list as installed (space-separated).
fedsilo_missing_pkgs() {
  local gone=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || gone+=("$p")
  done
  echo "${gone[@]:-}"
}

# fedsilo_install_missing WHO [--no-install-recommends] PKG...: installs those of PKG that are missing
# with apt-get (one `apt-get update` per process tree, FEDSILO_APT_UPDATED). Returns 0 when nothing is
# missing afterwards. Returns 1, with a message naming WHO and the packages, when some are missing
# and this is not root on a machine with apt-get and dpkg, or when apt-get fails.
fedsilo_install_missing() {
  local who=$1 opts=() missing
  shift
  while [ "${1:-}" = --no-install-recommends ]; do
    opts+=("$1")
    shift
  done
  missing=$(fedsilo_missing_pkgs "$@")
  [ -n "$missing" ] || return 0
  if ! command -v apt-get >/dev/null || ! command -v dpkg-query >/dev/null; then
    echo "$who: missing packages: $missing; no apt-get/dpkg here: install them (or their equivalents) first" >&2
    return 1
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "$who: missing packages: $missing; run as root (or install them: apt-get install $missing) first" >&2
    return 1
  fi
  echo "$who: installing: $missing"
  if [ -z "${FEDSILO_APT_UPDATED:-}" ]; then
    apt-get update -qq || { echo "$who: apt-get update failed" >&2; return 1; }
    export FEDSILO_APT_UPDATED=1
  fi
  # shellcheck disable=SC2086 # $missing is a list of package names
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${opts[@]}" $missing >/dev/null ||
    { echo "$who: apt-get install ${opts[*]} $missing failed" >&2; return 1; }
  missing=$(fedsilo_missing_pkgs "$@")
  [ -z "$missing" ] || { echo "$who: still missing after apt-get install: $missing" >&2; return 1; }
}
