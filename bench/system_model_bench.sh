#!/usr/bin/env bash
# The system model's cost (docs/system.md, "Cost"): W1 rounds (configs/w1_fedavg_fmnist.ini) with the
# simulated clock on (lognormal rates, uniform links, jitter, latency, a shared server link) against
# the same run with it off, alternated REPS times; prints each run's median round wall time (round 0
# left out) and the ratio of the medians, on over off. A benchmark, not a test: it asserts nothing.
#   bash bench/system_model_bench.sh [--build DIR] [--np N] [--rounds R] [--reps K]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/build NP=2 ROUNDS=6 REPS=3
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --np) NP=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    *) echo "unknown option $1 (expected --build, --np, --rounds, --reps)" >&2; exit 2 ;;
  esac
done
EXE=$BUILD/fedsilo
[ -x "$EXE" ] || { echo "no fedsilo executable at $EXE (build first, or pass --build DIR)" >&2; exit 2; }
cd "$ROOT"
# shellcheck source=jobs/env.sh
source jobs/env.sh
OUT=$(mktemp -d "${TMPDIR:-/tmp}/fedsilo_sysbench.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
ON=(--system.compute_gflops lognormal:2,0.5 --system.bandwidth_mbps uniform:50,500 --system.latency_ms 20
  --system.jitter 0.2 --system.server_bandwidth_mbps 1000)
for rep in $(seq "$REPS"); do
  for mode in off on; do
    extra=()
    [ "$mode" = on ] && extra=("${ON[@]}")
    mpirun -n "$NP" "$EXE" --config configs/w1_fedavg_fmnist.ini --rounds "$ROUNDS" "${extra[@]}" \
      --output "$OUT/${mode}_$rep.h5" >"$OUT/log" 2>&1 || { cat "$OUT/log" >&2; exit 1; }
  done
done
/usr/bin/python3 - "$OUT" "$REPS" <<'PYEOF'
import sys, h5py, numpy as np
out, reps = sys.argv[1], int(sys.argv[2])
med = {m: [float(np.median(h5py.File(f"{out}/{m}_{r}.h5", "r")["rounds/seconds"][1:])) for r in range(1, reps + 1)]
       for m in ("off", "on")}
for m in ("off", "on"):
    print(f"model {m:3}: median round seconds per run", " ".join(f"{s:.4f}" for s in med[m]))
print(f"ratio on/off (median of medians): {np.median(med['on']) / np.median(med['off']):.4f}")
PYEOF
