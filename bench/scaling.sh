#!/usr/bin/env bash
# Strong and weak scaling of fedsilo on a W1-like run (FashionMNIST, MLP 784-200-200-10, FedAvg,
# iid partition, batch 32, lr 0.05, fewer rounds). A benchmark, not a test: prints figures.
#
#   bash bench/scaling.sh                       # 1, 2, 4 ranks (4 is oversubscribed on 2 cores)
#   bash bench/scaling.sh --max-ranks 16        # 1, 2, 4, 8, 16 ranks on a 16-core machine
#   options: --build DIR (default build)  --rounds N (default 6)  --reps N (default 1)
#            --clients-per-rank N (weak, default 4)  --strong-clients N (default 16)
#            --samples N (weak: samples per client, default 60000 / (clients-per-rank * max-ranks))
#            --csv FILE (default out/bench/scaling-<time>/scaling.csv)
#
# strong: a fixed problem, --strong-clients clients (the 60,000 samples split iid), on 1..max ranks;
#         efficiency t1 / (P tP).
# weak:   --clients-per-rank clients per rank, each with --samples samples, so the work per rank is
#         fixed; efficiency t1 / tP.
# Rank counts above the number of cores are run (Open MPI oversubscription) and flagged: they
# measure the scheduler, not the program.
# Seconds per round = /summary/seconds_per_round (median over the rounds of the whole round:
# training, exact reduction, broadcast, results append). Evaluation runs in the first and last
# round only (eval.every 1000), so the median is the FL round itself.
# The CSV has the columns mode,ranks,clients,seconds_per_round (what `tools/fedsilo-analysis plot
# scaling FILE` reads; repeated rows are reduced to their median) plus oversubscribed (0/1).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
BUILD=$ROOT/build
MAXR=4
ROUNDS=6
REPS=1
CPR=4
STRONG=16
SAMPLES=""
CSV=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift ;;
    --max-ranks) MAXR=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --clients-per-rank) CPR=$2; shift ;;
    --strong-clients) STRONG=$2; shift ;;
    --samples) SAMPLES=$2; shift ;;
    --csv) CSV=$2; shift ;;
    -h|--help) bench_help; exit 0 ;;
    *) bench_unknown_option "$1" ;;
  esac
  shift
done
use_build
SAMPLES=${SAMPLES:-$((60000 / (CPR * MAXR)))}
CORES=$(nproc)
RANKLIST=()
for p in 1 2 4 8 16 32 64 128; do [ "$p" -le "$MAXR" ] && RANKLIST+=("$p"); done
[ "${RANKLIST[-1]}" -ne "$MAXR" ] && RANKLIST+=("$MAXR")
if [ -z "$CSV" ]; then
  DIR=$ROOT/out/bench/scaling-$(date +%Y%m%d-%H%M%S)
  CSV=$DIR/scaling.csv
fi
DIR=$(dirname "$CSV")
mkdir -p "$DIR"
bench_mpi_env
echo "mode,ranks,clients,seconds_per_round,oversubscribed" > "$CSV"
COMMON=(--algorithm fedavg --dataset fashion_mnist --model mlp --model.hidden 200,200 --partition.scheme iid
        --data.split 1,0,0 --train.epochs 1 --train.batch 32 --train.lr 0.05 --eval.batch 1000 --eval.every 1000
        --rounds "$ROUNDS" --seed 0)
echo "# fedsilo scaling: ranks ${RANKLIST[*]} on $CORES cores; $ROUNDS rounds; $REPS repetition(s)"
echo "# strong: $STRONG clients (60000 samples); weak: $CPR clients per rank x $SAMPLES samples"
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg); CSV: $CSV"

run() {  # mode ranks clients extra-args...
  local mode=$1 p=$2 k=$3
  shift 3
  local over=0
  [ "$p" -gt "$CORES" ] && over=1
  local h5=$DIR/${mode}_p${p}.h5
  mpirun -n "$p" "$EXE" "${COMMON[@]}" --clients "$k" --output "$h5" "$@" > "$DIR/${mode}_p${p}.log" 2>&1 ||
    bench_failed fedsilo "$DIR/${mode}_p${p}.log"
  local row
  row=$($PY "$ROOT/bench/perf_tools.py" scaling-row "$mode" "$p" "$k" "$h5" "$over")
  echo "$row" >> "$CSV"
  echo "  $row$([ "$over" = 1 ] && echo "   <- oversubscribed ($p ranks on $CORES cores)")"
  rm -f "$h5"
}

for rep in $(seq 1 "$REPS"); do
  for p in "${RANKLIST[@]}"; do run strong "$p" "$STRONG"; done
  for p in "${RANKLIST[@]}"; do run weak "$p" $((CPR * p)) --partition.samples_per_client "$SAMPLES"; done
done
$PY "$ROOT/bench/perf_tools.py" scaling-report "$CSV"
bench_load_average_at_end
