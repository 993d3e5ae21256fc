#!/usr/bin/env bash
# oneDNN as a convolution / inner-product backend, measured against fedsilo's own kernels on the layer
# shapes of cnn_playerfl (batch 128) and cnn_mcmahan (W2, batch 32): configures a build with
# -DFEDSILO_ONEDNN=ON (installing Debian's libdnnl-dev when missing and running as root), builds
# bench/onednn_compare.cpp and runs it on one thread (OMP_NUM_THREADS=1: Debian's oneDNN runs on OpenMP),
# between two runs of bench/fma_peak.c for reference. A benchmark: prints figures
# (docs/performance.md, "oneDNN as a backend", explains the columns and holds the measured table).
#
#   bash bench/onednn_compare.sh [--build DIR (default build-onednn)] [--reps N (default 7)] [--ms MS (default 40)]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
BUILD=$ROOT/build-onednn
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift ;;
    --reps | --ms) ARGS+=("$1" "$2"); shift ;;
    -h | --help) bench_help; exit 0 ;;
    *) bench_unknown_option "$1" ;;
  esac
  shift
done
# shellcheck source=jobs/packages.sh
source "$ROOT/jobs/packages.sh"
fedsilo_install_missing "$BENCH_NAME" libdnnl-dev || exit 2
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFEDSILO_ONEDNN=ON "${launcher[@]}" >/dev/null
cmake --build "$BUILD" -j "${FEDSILO_JOBS:-2}" --target fedsilo_onednn_compare
gcc -O3 -march=native -fopenmp "$ROOT/bench/fma_peak.c" -o "$BUILD/fma_peak"
echo "# $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), load average" \
  "$(cut -d' ' -f1-3 /proc/loadavg)"
echo "# bench/fma_peak.c before: $("$BUILD/fma_peak" 1 | tr '\n' ' ')"
OMP_NUM_THREADS=1 "$BUILD/bench/fedsilo_onednn_compare" "${ARGS[@]}"
echo "# bench/fma_peak.c after: $("$BUILD/fma_peak" 1 | tr '\n' ' ')"
bench_load_average_at_end
