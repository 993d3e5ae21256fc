#!/usr/bin/env bash
# The main job: set up (installs what is missing, builds), then FedAvg and Local on FashionMNIST,
# 10 clients on 2 MPI ranks, and a comparison table of the two. Run again, it replaces its own two
# results files (--overwrite).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$ROOT/jobs/setup.sh"
# shellcheck source=jobs/env.sh
source "$ROOT/jobs/env.sh"
BUILD=${FEDSILO_BUILD_DIR:-$ROOT/build}
RANKS=${FEDSILO_RANKS:-2}
OUT=${FEDSILO_OUT:-$ROOT/out}
mkdir -p "$OUT"
cd "$ROOT"
for alg in fedavg local; do
  echo "== $alg =="
  mpirun -n "$RANKS" "$BUILD/fedsilo" --config configs/quickstart.ini --algorithm "$alg" --output "$OUT/quickstart_$alg.h5" \
    --overwrite
done
echo
echo "== comparison (per-client test accuracy after the last round) =="
"$ROOT/tools/fedsilo-analysis" summary "$OUT/quickstart_fedavg.h5" "$OUT/quickstart_local.h5"
