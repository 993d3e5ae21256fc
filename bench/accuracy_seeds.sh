#!/usr/bin/env bash
# Accuracy of fedsilo variants over several seeds, for claims of the kind "this change leaves accuracy
# where it was" (bf16 against fp32; a backend with another summation order): per workload and seed every
# variant runs back to back, then per variant the mean and standard deviation over the seeds, its
# difference from the first variant (this build, fp32) seed by seed, their mean and the largest one.
# A benchmark: prints figures.
#
#   bash bench/accuracy_seeds.sh                  # fp32 against bf16 on W1, W2 and PFL, seeds 1-5
#   options: --build DIR (default build)  --ranks N (default 2)  --seeds "1 2 3 4 5"  --rounds N (default 3)
#            --only w1|w2|pfl  --out DIR (default out/bench/accuracy-<time>)
#            --precision P (repeatable; default bf16): this build with train.precision = P
#            --also LABEL=DIR (repeatable): the fedsilo of build DIR at fp32 (e.g. a -DFEDSILO_ONEDNN=ON build)
#
# Workloads: w1 and w2 are bench/compare_torch.sh's (configs/w1_fedavg_fmnist.ini on the stored
# Dirichlet(0.5) partition; w2 with --model cnn_mcmahan), scored by the global model's test accuracy;
# pfl is the PLayer-FL authors' protocol (configs/playerfl_fmnist.ini --algorithm fedavg), scored by the
# mean client test accuracy of the best-validation snapshots (/summary/mean).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
BUILD=$ROOT/build
RANKS=2
SEEDS="1 2 3 4 5"
ROUNDS=3
ONLY=""
OUT=""
PRECISIONS=()
ALSO=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift ;;
    --ranks) RANKS=$2; shift ;;
    --seeds) SEEDS=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --out) OUT=$2; shift ;;
    --precision) PRECISIONS+=("$2"); shift ;;
    --also) ALSO+=("$2"); shift ;;
    -h|--help) bench_help; exit 0 ;;
    *) bench_unknown_option "$1" ;;
  esac
  shift
done
bench_workload_choice "$ONLY"
bench_positive_integers RANKS ROUNDS
for s in $SEEDS; do [[ $s =~ ^[0-9]+$ ]] || bench_usage_error "--seeds takes non-negative integers, got '$s'"; done
[ -n "$SEEDS" ] || bench_usage_error "--seeds is empty"
[ ${#PRECISIONS[@]} -gt 0 ] || [ ${#ALSO[@]} -gt 0 ] || PRECISIONS=(bf16)
for p in "${PRECISIONS[@]}"; do
  case "$p" in fp32 | bf16) ;; *) bench_usage_error "--precision fp32|bf16, got '$p'" ;; esac
done
use_build
# The variants: "label|executable|train.precision", this build at fp32 first (the reference).
VARIANTS=("fp32|$EXE|fp32")
for p in "${PRECISIONS[@]}"; do [ "$p" = fp32 ] || VARIANTS+=("$p|$EXE|$p"); done
for also in "${ALSO[@]}"; do
  [ -x "${also#*=}/fedsilo" ] || bench_usage_error "--also $also: no fedsilo in ${also#*=}"
  VARIANTS+=("${also%%=*}|$(cd "${also#*=}" && pwd)/fedsilo|fp32")
done
PART=$ROOT/data/partitions/fmnist_c10_dirichlet0.5_seed0.npy
bench_out_dir accuracy
RUNS=$OUT/runs.jsonl
: >"$RUNS"
bench_mpi_env
echo "# $EXE at $RANKS ranks, $ROUNDS rounds, seeds $SEEDS; load average $(cut -d' ' -f1-3 /proc/loadavg);" \
  "raw output in $OUT"

run_variant() { # workload seed variant args...
  local wl=$1 seed=$2 label exe precision
  IFS='|' read -r label exe precision <<<"$3"
  shift 3
  local tag=$OUT/${wl}_${label//[^A-Za-z0-9]/_}_s$seed
  rm -f "$tag.h5"  # a rerun into the same --out measures anew (fedsilo refuses to replace a finished file)
  mpirun -n "$RANKS" "$exe" "$@" --seed "$seed" --rounds "$ROUNDS" --train.precision "$precision" \
    --output "$tag.h5" >"$tag.log" 2>&1 || bench_failed fedsilo "$tag.log"
  $PY "$ROOT/bench/perf_tools.py" accuracy-run "$tag.h5" "$wl" "$label" "$seed" | tee -a "$RUNS" | sed 's/^/  /'
}

for wl in w1 w2 pfl; do
  [ -z "$ONLY" ] || [ "$ONLY" = "$wl" ] || continue
  case $wl in
    w1) args=(--config configs/w1_fedavg_fmnist.ini --partition.file "$PART") ;;
    w2) args=(--config configs/w1_fedavg_fmnist.ini --partition.file "$PART" --model cnn_mcmahan) ;;
    pfl) args=(--config configs/playerfl_fmnist.ini --algorithm fedavg) ;;
  esac
  echo "$wl"
  for seed in $SEEDS; do
    for v in "${VARIANTS[@]}"; do run_variant "$wl" "$seed" "$v" "${args[@]}"; done
  done
done
$PY "$ROOT/bench/perf_tools.py" accuracy-report "$RUNS" | tee "$OUT/summary.txt"
bench_load_average_at_end
