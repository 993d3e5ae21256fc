#!/usr/bin/env bash
# fedsilo against the PyTorch reference (torch_fedavg.py) on W1 and W2 of PERF_BASELINE.md, back to
# back in one run: per repetition fedsilo, PyTorch as installed, PyTorch tuned, alternating, so that
# the ratios are measured under the same machine load. A benchmark, not a test: prints figures.
#
#   bash bench/compare_torch.sh                 # full: 3 repetitions, W1 20 rounds, W2 3 rounds
#   bash bench/compare_torch.sh --quick         # 1 repetition, W1 5 rounds, W2 1 round
#   options: --shared DIR (default ../shared)  --build DIR (default build)  --ranks N (default 2)
#            --reps N  --w1-rounds N  --w2-rounds N  --only w1|w2  --out DIR (default out/bench/compare-<time>)
#
# Per workload it prints seconds per round (median over all rounds of all repetitions), training
# samples/s (60000 / median training seconds; fedsilo: /rounds/train_seconds, the slowest rank's
# local training; PyTorch: train_s), final test accuracy, peak RSS (fedsilo: per rank, from
# /usr/bin/time around each rank; PyTorch: ru_maxrss of its one process) and the fedsilo/PyTorch
# ratios against both PyTorch settings. A last column gives CPU seconds per round (user + system of
# all processes over the whole run, set-up included, divided by the rounds): on a loaded machine wall
# times measure the other jobs too, CPU seconds much less so.
# Settings:
#   as installed: OPENBLAS_CORETYPE unset (OpenBLAS 0.3.21 falls back to Prescott/SSE3 kernels here),
#                 W1 --threads 1 (torch's default here), W2 --threads 2 (PERF_BASELINE's default row);
#   tuned:        OPENBLAS_CORETYPE=SkylakeX, W1 --threads 1, W2 --threads 2 --blas-threads 1.
# Both programs use the same partition: fedsilo reads $SHARED/bench/partition_seed0_c10_a0.5.npy,
# PyTorch recomputes it from the seed and dumps it; the script checks the two are identical.
# Needs python3-torch (installed here with apt-get if missing) and a built fedsilo.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=$ROOT/../shared
BUILD=$ROOT/build
RANKS=2
REPS=3
W1_ROUNDS=20
W2_ROUNDS=3
ONLY=""
OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) REPS=1; W1_ROUNDS=5; W2_ROUNDS=1 ;;
    --shared) SHARED=$2; shift ;;
    --build) BUILD=$2; shift ;;
    --ranks) RANKS=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --w1-rounds) W1_ROUNDS=$2; shift ;;
    --w2-rounds) W2_ROUNDS=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "compare_torch.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$ONLY" ] && [ "$ONLY" != w1 ] && [ "$ONLY" != w2 ] && { echo "--only w1|w2" >&2; exit 2; }
SHARED=$(cd "$SHARED" && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
use_build
TORCH=$SHARED/bench/torch_fedavg.py
PART=$SHARED/bench/partition_seed0_c10_a0.5.npy
[ -f "$TORCH" ] && [ -f "$PART" ] || { echo "missing $TORCH or $PART (pass --shared DIR)" >&2; exit 2; }
if ! dpkg -s python3-torch > /dev/null 2>&1; then
  echo "python3-torch is not installed: installing it (apt-get install -y python3-torch)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y python3-torch > /dev/null
fi
OUT=${OUT:-$ROOT/out/bench/compare-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
RUNS=$OUT/runs.jsonl
: > "$RUNS"
# shellcheck source=/dev/null
source "$ROOT/jobs/env.sh"   # MPI as root, oversubscription allowed, OPENBLAS_NUM_THREADS=1 per rank
cd "$ROOT"
echo "# fedsilo $EXE at $RANKS ranks vs $TORCH; $REPS repetition(s); W1 $W1_ROUNDS rounds, W2 $W2_ROUNDS rounds"
echo "# $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); raw output in $OUT"

# PyTorch with a controlled OpenBLAS environment: the caller's OPENBLAS_* settings are dropped.
torch_env() {
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE -u OPENBLAS_VERBOSE -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS "$@"
}

run_fedsilo() {  # workload label rep args...
  local wl=$1 label=$2 rep=$3
  shift 3
  local tag=$OUT/${wl}_fedsilo_$rep
  # every rank under /usr/bin/time: per-rank peak RSS and CPU seconds
  mpirun -n "$RANKS" sh -c 'exec /usr/bin/time -f "%M %U %S %e" -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' "$tag.usage" \
    "$EXE" --config configs/w1_fedavg_fmnist.ini --partition.file "$PART" --output "$tag.h5" "$@" > "$tag.log" 2>&1 ||
    { echo "fedsilo failed, see $tag.log" >&2; tail -5 "$tag.log" >&2; exit 1; }
  $PY "$ROOT/bench/perf_tools.py" fedsilo-run "$tag.h5" "$tag.usage" "$label" "$wl" >> "$RUNS"
  echo "  $wl rep $rep $label: $(grep -E '^done' "$tag.log" || tail -1 "$tag.log")"
}

run_torch() {  # workload label rep coretype args...
  local wl=$1 label=$2 rep=$3 core=$4
  shift 4
  local tag=$OUT/${wl}_torch_${label// /_}_$rep
  local dump=()
  [ ! -f "$OUT/torch_partition.u8" ] && dump=(--dump-partition "$OUT/torch_partition.u8")
  local timed=(/usr/bin/time -f "%M %U %S %e" -o "$tag.usage.0" "$PY" "$TORCH" "$@" "${dump[@]}" --json "$tag.json")
  if [ -n "$core" ]; then
    torch_env OPENBLAS_CORETYPE="$core" "${timed[@]}" > "$tag.log" 2>&1
  else
    torch_env "${timed[@]}" > "$tag.log" 2>&1
  fi || { echo "torch_fedavg.py failed, see $tag.log" >&2; tail -5 "$tag.log" >&2; exit 1; }
  $PY "$ROOT/bench/perf_tools.py" torch-run "$tag.json" "$label" "$wl" "$tag.usage" >> "$RUNS"
  echo "  $wl rep $rep $label: $(grep -E '^SUMMARY' "$tag.log" | cut -c1-160)"
  if [ -f "$OUT/torch_partition.u8" ] && [ ! -f "$OUT/partition_checked" ]; then
    if cmp -s "$OUT/torch_partition.u8" "$SHARED/bench/partition_seed0_c10_a0.5.u8"; then
      echo "  partition: PyTorch's Dirichlet partition is byte-identical to the shipped file fedsilo reads"
    else
      echo "  WARNING: PyTorch's partition differs from $SHARED/bench/partition_seed0_c10_a0.5.u8" >&2
    fi
    touch "$OUT/partition_checked"
  fi
}

for rep in $(seq 1 "$REPS"); do
  if [ "$ONLY" != w2 ]; then
    echo "W1 (mlp, FedAvg, 10 clients, $W1_ROUNDS rounds), repetition $rep"
    run_fedsilo w1 "fedsilo ($RANKS ranks)" "$rep" --rounds "$W1_ROUNDS"
    run_torch w1 "torch as installed (t1)" "$rep" "" --workload mlp --threads 1 --rounds "$W1_ROUNDS"
    run_torch w1 "torch tuned (SkylakeX, t1)" "$rep" SkylakeX --workload mlp --threads 1 --rounds "$W1_ROUNDS"
  fi
  if [ "$ONLY" != w1 ]; then
    echo "W2 (cnn_mcmahan, FedAvg, 10 clients, $W2_ROUNDS rounds), repetition $rep"
    run_fedsilo w2 "fedsilo ($RANKS ranks)" "$rep" --model cnn_mcmahan --rounds "$W2_ROUNDS"
    run_torch w2 "torch as installed (t2)" "$rep" "" --workload cnn --threads 2 --rounds "$W2_ROUNDS"
    run_torch w2 "torch tuned (SkylakeX, t2, blas1)" "$rep" SkylakeX --workload cnn --threads 2 --blas-threads 1 \
      --rounds "$W2_ROUNDS"
  fi
done

$PY "$ROOT/bench/perf_tools.py" compare "$RUNS" | tee "$OUT/summary.txt"
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
