#!/usr/bin/env bash
# The asynchronous driver's cost (docs/async.md, "Cost"): W1 (configs/w1_fedavg_fmnist.ini, 10 equal
# silos, no [system] section) as synchronous FedAvg for R rounds against FedAsync, FedBuff
# (buffer_size 5) and FedCompass for the same number of client updates (R x 10, R x 2 and R + 9
# versions: FedCompass's first 10 versions take one update each, every later one all 10), evaluated as
# often (every 10, every 2 and every 10 versions); FedCompass's jobs train one epoch each
# (q_min = q_max = the steps of an epoch), as FedAvg's clients do. Alternated REPS times. Prints each run's training-plus-server
# wall time (the sum of /rounds/seconds) and the ratios async/sync of the medians. A benchmark, not a
# test: it asserts nothing.
#   bash bench/async_bench.sh [--build DIR] [--np N] [--rounds R] [--reps K]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/build NP=2 ROUNDS=4 REPS=3
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
OUT=$(mktemp -d "${TMPDIR:-/tmp}/fedsilo_asyncbench.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
K=10
MODES=(sync fedasync fedbuff fedcompass)
# epoch_steps FILE: the local steps of one epoch of the largest client of a results file.
epoch_steps() {
  /usr/bin/python3 - "$1" <<'PYEOF'
import configparser, math, sys, h5py
f = h5py.File(sys.argv[1], "r")
cfg = configparser.ConfigParser()
cfg.read_string("[top]\n" + f.attrs["config"].decode())
batch, epochs = cfg.getint("train", "batch"), cfg.getint("train", "epochs")
print(max(math.ceil(n / batch) for n in f["clients/num_train"][:]) * epochs)
PYEOF
}
for rep in $(seq "$REPS"); do
  for mode in "${MODES[@]}"; do
    case $mode in
      sync) extra=(--rounds "$ROUNDS") ;;
      fedasync) extra=(--algorithm fedasync --rounds $((ROUNDS * K)) --eval.every $K) ;;
      fedbuff) extra=(--algorithm fedbuff --fedbuff.buffer_size 5 --rounds $((ROUNDS * 2)) --eval.every 2) ;;
      fedcompass)
        steps=$(epoch_steps "$OUT/sync_1.h5")
        extra=(--algorithm fedcompass --fedcompass.q_min "$steps" --fedcompass.q_max "$steps"
               --rounds $((ROUNDS + K - 1)) --eval.every $K) ;;
    esac
    mpirun -n "$NP" "$EXE" --config configs/w1_fedavg_fmnist.ini "${extra[@]}" --output "$OUT/${mode}_$rep.h5" \
      >"$OUT/log" 2>&1 || { cat "$OUT/log" >&2; exit 1; }
  done
done
/usr/bin/python3 - "$OUT" "$REPS" <<'PYEOF'
import sys, h5py, numpy as np
out, reps = sys.argv[1], int(sys.argv[2])
total = {m: [float(h5py.File(f"{out}/{m}_{r}.h5", "r")["rounds/seconds"][:].sum()) for r in range(1, reps + 1)]
         for m in ("sync", "fedasync", "fedbuff", "fedcompass")}
for m, t in total.items():
    print(f"{m:10}: wall seconds per run", " ".join(f"{s:.3f}" for s in t))
for m in ("fedasync", "fedbuff", "fedcompass"):
    print(f"ratio {m}/sync (median of runs): {np.median(total[m]) / np.median(total['sync']):.3f}")
PYEOF
