#!/usr/bin/env bash
# Memory and round time against the number of clients K: FedAvg, MLP 784-200-200-10, FashionMNIST,
# iid partition, 100 clients per round (all of them when K <= 100), at 2 ranks (--ranks N).
# Peak RSS per rank comes from /usr/bin/time around each rank. Each K runs twice: evaluating every
# round (the default eval.every = 1: every client's test split and the global model) and evaluating
# only the first and last round (eval.every 1000), which separates the per-round cost of the
# client evaluation loop from the FL round itself. A benchmark, not a test: prints figures.
#
#   bash bench/clients_memory.sh [--build DIR] [--ranks N] [--rounds N] [--clients "100 1000 10000"]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
BUILD=$ROOT/build
RANKS=2
ROUNDS=5
KS="100 1000 10000"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift ;;
    --ranks) RANKS=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --clients) KS=$2; shift ;;
    -h|--help) bench_help; exit 0 ;;
    *) bench_unknown_option "$1" ;;
  esac
  shift
done
bench_positive_integers RANKS ROUNDS
for K in $KS; do [[ $K =~ ^[1-9][0-9]*$ ]] || bench_usage_error "--clients takes positive integers, got '$K'"; done
use_build
bench_out_dir clients
DIR=$OUT
bench_mpi_env
echo "# K clients, 100 per round, iid, MLP, $RANKS ranks, $ROUNDS rounds; load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%8s %10s %18s %14s %14s %16s\n" clients eval.every "peak RSS/rank MB" "s/round med" "train s med" "CPU s (ranks)"
for K in $KS; do
  CPRND=100
  [ "$K" -lt 100 ] && CPRND=0
  for EV in 1 1000; do
    tag=$DIR/k${K}_ev${EV}
    mpirun -n "$RANKS" sh -c 'exec /usr/bin/time -f "%M %U %S %e" -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' "$tag.usage" \
      "$EXE" --algorithm fedavg --dataset fashion_mnist --model mlp --model.hidden 200,200 --clients "$K" \
      --fl.clients_per_round "$CPRND" --partition.scheme iid --rounds "$ROUNDS" --eval.every "$EV" \
      --train.batch 32 --train.lr 0.05 --seed 0 --output "$tag.h5" > "$tag.log" 2>&1 ||
      bench_failed fedsilo "$tag.log"
    $PY - "$tag.h5" "$tag.usage" "$K" "$EV" <<'EOF'
import sys, h5py, numpy as np
sys.path.insert(0, sys.argv[0].rsplit("/", 1)[0])
h5, prefix, K, ev = sys.argv[1:5]
import glob
ranks = []
for p in sorted(glob.glob(prefix + ".*")):
    last = [l.split() for l in open(p) if len(l.split()) == 4][-1]
    ranks.append((float(last[0]) / 1024.0, float(last[1]) + float(last[2])))
with h5py.File(h5, "r") as f:
    spr = float(f["/summary/seconds_per_round"][()])
    tr = float(np.median(f["/rounds/train_seconds"][:]))
rss = "/".join(f"{r[0]:.0f}" for r in ranks)
cpu = "/".join(f"{r[1]:.1f}" for r in ranks)
print(f"{K:>8} {ev:>10} {rss:>18} {spr:>14.3f} {tr:>14.3f} {cpu:>16}")
EOF
    rm -f "$tag.h5"
  done
done
echo "# logs in $DIR"
bench_load_average_at_end
