#!/usr/bin/env bash
# fedsilo against its PyTorch reference (bench/torch_reference.py) on the benchmark workloads W1, W2
# and PFL (PLayer-FL's CNN, cnn_playerfl, at batch 128; docs/performance.md), back to back in one run:
# per repetition fedsilo (and the other builds and kernel sets asked for), PyTorch as installed,
# PyTorch tuned, alternating, so that the ratios are measured under the same machine load. Before and
# after the runs it measures the machine's FP32 FMA peak (bench/fma_peak.c, built here with
# gcc -O3 -march=native) and prints every throughput also as a fraction of the peak of the cores the
# program used. A benchmark, not a test: prints figures.
#
#   bash bench/compare_torch.sh                 # full: 3 repetitions, W1 20 rounds, W2 3, PFL 1 (2000/client)
#   bash bench/compare_torch.sh --quick         # 1 repetition, W1 5 rounds, W2 1 round, PFL 1 (300/client)
#   options: --build DIR (default build)  --ranks N (default 2)  --reps N  --w1-rounds N  --w2-rounds N
#            --pfl-rounds N  --pfl-samples N (training samples per client, PLayer-FL's cap is 2000)
#            --only w1|w2|pfl  --out DIR (default out/bench/compare-<time>)
#            --isa SET (repeatable): also run this build with FEDSILO_ISA=SET (avx2, generic)
#            --precision P (repeatable): also run this build with train.precision = P (bf16)
#            --also LABEL=DIR (repeatable): also run the fedsilo of build DIR, e.g. a FEDSILO_NATIVE=OFF
#            build (portable) or main's build (before), also with each --precision; their samples/s are
#            compared with this build's
#            --no-torch: the fedsilo variants only; --no-tuned: PyTorch as installed only
#
# Per workload it prints seconds per round (median over all rounds of all repetitions), training
# samples/s (60000 / median training seconds; fedsilo: /rounds/train_seconds, the slowest rank's
# local training; PyTorch: the sum of its clients' training), the training GFLOP/s these mean (exact
# FLOPs per sample, docs/performance.md) and their share of the FMA peak of the cores used (fedsilo:
# one per rank; PyTorch: its --threads), final test accuracy, peak RSS (fedsilo: per rank, from
# /usr/bin/time around each rank; PyTorch: its one process) and the fedsilo/PyTorch ratios. A last
# column gives CPU seconds per round (user + system of all processes over the whole run, set-up
# included, divided by the rounds): on a loaded machine wall times measure the other jobs too, CPU
# seconds much less so. With two or more repetitions it also lists each repetition's samples/s (of its
# median round), share of the peak and CPU seconds (of the rank or process that used the most), and
# compares the fedsilo variants repetition by repetition (each pair ran back to back), so that one
# repetition the host slowed is seen as such: fewer samples/s for more CPU seconds of the same work.
# When the build has its benchmarks (bench/fedsilo_bench), the W1 training step is also timed on each
# vCPU the ranks use, before and after the runs, and a spread over 5% between the vCPUs is pointed
# out: a host can slow one vCPU at the dense kernels while its FMA loop, and so the peak, read the same.
# PyTorch settings:
#   as installed: every OPENBLAS_* variable dropped (OpenBLAS picks its kernels for the CPU itself),
#                 W1 --threads 1 (torch's default on a 2-vCPU guest), W2 --threads 2;
#   tuned:        OPENBLAS_CORETYPE=SkylakeX (the AVX-512 kernels; on Intel CPUs that OpenBLAS 0.3.21
#                 does not recognise, "as installed" falls back to SSE3 ones), W1 --threads 1,
#                 W2 --threads 2 --blas-threads 1.
# Both programs read the same partition, data/partitions/fmnist_c10_dirichlet0.5_seed0.npy.
# Prerequisites beyond jobs/setup.sh: Debian's python3-torch (installed here with apt-get when missing
# and running as root; not needed with --no-torch) and gcc with OpenMP (build-essential); a built
# fedsilo.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
BUILD=$ROOT/build
RANKS=2
REPS=3
W1_ROUNDS=20
W2_ROUNDS=3
PFL_ROUNDS=1
PFL_SAMPLES=2000
ONLY=""
OUT=""
ISAS=()
PRECISIONS=()
ALSO=()
TORCH_RUNS=1
TUNED=1
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) REPS=1; W1_ROUNDS=5; W2_ROUNDS=1; PFL_ROUNDS=1; PFL_SAMPLES=300 ;;
    --build) BUILD=$2; shift ;;
    --ranks) RANKS=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --w1-rounds) W1_ROUNDS=$2; shift ;;
    --w2-rounds) W2_ROUNDS=$2; shift ;;
    --pfl-rounds) PFL_ROUNDS=$2; shift ;;
    --pfl-samples) PFL_SAMPLES=$2; shift ;;
    --isa) ISAS+=("$2"); shift ;;
    --precision) PRECISIONS+=("$2"); shift ;;
    --also) ALSO+=("$2"); shift ;;
    --only) ONLY=$2; shift ;;
    --no-torch) TORCH_RUNS=0 ;;
    --no-tuned) TUNED=0 ;;
    --out) OUT=$2; shift ;;
    -h|--help) bench_help; exit 0 ;;
    *) bench_unknown_option "$1" ;;
  esac
  shift
done
bench_workload_choice "$ONLY"
for isa in "${ISAS[@]}"; do
  case "$isa" in avx512 | avx2 | generic) ;; *) bench_usage_error "--isa avx512|avx2|generic, got '$isa'" ;; esac
done
bench_positive_integers RANKS REPS W1_ROUNDS W2_ROUNDS PFL_ROUNDS PFL_SAMPLES
use_build
# The fedsilo variants of each repetition: "label|executable|FEDSILO_ISA|train.precision" (this build first).
VARIANTS=("this build|$EXE|")
for isa in "${ISAS[@]}"; do VARIANTS+=("this build, FEDSILO_ISA=$isa|$EXE|$isa"); done
for p in "${PRECISIONS[@]}"; do VARIANTS+=("this build, $p|$EXE||$p"); done
for also in "${ALSO[@]}"; do
  [ -x "${also#*=}/fedsilo" ] || bench_usage_error "--also $also: no fedsilo in ${also#*=}"
  VARIANTS+=("${also%%=*}|$(cd "${also#*=}" && pwd)/fedsilo|")
  for p in "${PRECISIONS[@]}"; do VARIANTS+=("${also%%=*}, $p|$(cd "${also#*=}" && pwd)/fedsilo||$p"); done
done
bench_torch_workloads $([ "$TORCH_RUNS" = 1 ] || echo --no-torch)
command -v gcc >/dev/null || bench_usage_error "gcc is missing (apt-get install build-essential)"
bench_out_dir compare
RUNS=$OUT/runs.jsonl
PEAKS=$OUT/fma_peak.txt
: >"$RUNS"
: >"$PEAKS"
bench_mpi_env

gcc -O3 -march=native -fopenmp "$ROOT/bench/fma_peak.c" -o "$OUT/fma_peak"
measure_peak() { # thread counts the programs use: fedsilo's ranks, PyTorch's 1 and 2 threads
  "$OUT/fma_peak" $(printf '%s\n' 1 2 "$RANKS" | sort -un) | tee -a "$PEAKS" | sed 's/^/  /'
}
# The W1 training step (bench/step_bench.cpp) on each vCPU the ranks run on (rank r on vCPU r, Open
# MPI's default mapping), when the build has its benchmarks: a host can slow one vCPU at the dense
# kernels and leave the register-only FMA loop above unchanged, and every round waits for its slowest
# rank.
STEP_BENCH=$BUILD/bench/fedsilo_bench
measure_vcpus() { # WHEN (before, after)
  [ -x "$STEP_BENCH" ] && command -v taskset >/dev/null || return 0
  local cpu us
  for cpu in $(seq 0 $((RANKS < $(nproc) ? RANKS - 1 : $(nproc) - 1))); do
    us=$(taskset -c "$cpu" "$STEP_BENCH" --benchmark_filter='^Step/model:0/batch:32/fused:1/sgd:1$' \
      --benchmark_min_time=0.2 --benchmark_time_unit=us --benchmark_format=csv 2>/dev/null |
      awk -F, 'END { print $4 }') || true
    if [ -n "$us" ]; then echo "vcpu_step when=$1 cpu=$cpu us=$us" | tee -a "$PEAKS" | sed 's/^/  /'; fi
  done
}
plural() { [ "$1" = 1 ] && echo "$1 $2" || echo "$1 ${2}s"; }
echo "# fedsilo $EXE at $(plural "$RANKS" rank) vs bench/torch_reference.py; $(plural "$REPS" repetition);" \
  "W1 $(plural "$W1_ROUNDS" round), W2 $(plural "$W2_ROUNDS" round), PFL $(plural "$PFL_ROUNDS" round) of" \
  "$PFL_SAMPLES samples per client"
echo "# $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), load average" \
  "$(cut -d' ' -f1-3 /proc/loadavg); raw output in $OUT"
echo "FMA peak before the runs:"
measure_peak
measure_vcpus before

# PyTorch with a controlled OpenBLAS environment: the caller's OPENBLAS_* settings are dropped.
torch_env() {
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE -u OPENBLAS_VERBOSE -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS "$@"
}

run_fedsilo() { # workload variant rep args...
  local wl=$1 label exe isa precision rep=$3
  IFS='|' read -r label exe isa precision <<<"$2"
  label="fedsilo $label ($(plural "$RANKS" rank))"
  shift 3
  local tag=$OUT/${wl}_fedsilo_${label//[^A-Za-z0-9]/_}_$rep
  rm -f "$tag.h5"  # a rerun into the same --out measures anew (fedsilo refuses to replace a finished file)
  # every rank under /usr/bin/time: per-rank peak RSS and CPU seconds
  env ${isa:+FEDSILO_ISA=$isa} mpirun -n "$RANKS" \
    sh -c 'exec /usr/bin/time -f "%M %U %S %e" -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' "$tag.usage" "$exe" --config "$CONFIG" --partition.file "$PART" --output "$tag.h5" ${precision:+--train.precision "$precision"} "$@" >"$tag.log" 2>&1 ||
    bench_failed fedsilo "$tag.log"
  $PY "$ROOT/bench/perf_tools.py" fedsilo-run "$tag.h5" "$tag.usage" "$label" "$wl" "$RANKS" >>"$RUNS"
  echo "  $wl rep $rep $label: $(grep -E '^done' "$tag.log" || tail -1 "$tag.log")"
}

run_torch() { # workload label rep coretype args...
  [ "$TORCH_RUNS" = 1 ] || return 0
  [ "$TUNED" = 1 ] || [ -z "$4" ] || return 0
  local wl=$1 label=$2 rep=$3 core=$4
  shift 4
  local tag=$OUT/${wl}_torch_${label//[^A-Za-z0-9]/_}_$rep
  local timed=(/usr/bin/time -f "%M %U %S %e" -o "$tag.usage.0" "$PY" "$TORCH" --workload "$wl" --partition "$PART"
               "$@" --json "$tag.json")
  if [ -n "$core" ]; then
    torch_env OPENBLAS_CORETYPE="$core" "${timed[@]}" >"$tag.log" 2>&1
  else
    torch_env "${timed[@]}" >"$tag.log" 2>&1
  fi || bench_failed torch_reference.py "$tag.log"
  $PY "$ROOT/bench/perf_tools.py" torch-run "$tag.json" "$label" "$wl" "$tag.usage" >>"$RUNS"
  echo "  $wl rep $rep $label: $(grep -E '^SUMMARY' "$tag.log" | cut -c1-160)"
}

for rep in $(seq 1 "$REPS"); do
  if [ -z "$ONLY" ] || [ "$ONLY" = w1 ]; then
    echo "W1 (mlp, FedAvg, 10 clients, $(plural "$W1_ROUNDS" round)), repetition $rep"
    for v in "${VARIANTS[@]}"; do run_fedsilo w1 "$v" "$rep" --rounds "$W1_ROUNDS"; done
    run_torch w1 "torch as installed (t1)" "$rep" "" --threads 1 --rounds "$W1_ROUNDS"
    run_torch w1 "torch tuned (SkylakeX, t1)" "$rep" SkylakeX --threads 1 --rounds "$W1_ROUNDS"
  fi
  if [ -z "$ONLY" ] || [ "$ONLY" = w2 ]; then
    echo "W2 (cnn_mcmahan, FedAvg, 10 clients, $(plural "$W2_ROUNDS" round)), repetition $rep"
    for v in "${VARIANTS[@]}"; do run_fedsilo w2 "$v" "$rep" --model cnn_mcmahan --rounds "$W2_ROUNDS"; done
    run_torch w2 "torch as installed (t2)" "$rep" "" --threads 2 --rounds "$W2_ROUNDS"
    run_torch w2 "torch tuned (SkylakeX, t2, blas1)" "$rep" SkylakeX --threads 2 --blas-threads 1 --rounds "$W2_ROUNDS"
  fi
  if [ -z "$ONLY" ] || [ "$ONLY" = pfl ]; then
    echo "PFL (cnn_playerfl, batch 128, FedAvg, 10 clients of at most $PFL_SAMPLES samples, $(plural "$PFL_ROUNDS" round)), repetition $rep"
    pfl=(--rounds "$PFL_ROUNDS" --train.batch 128 --partition.samples_per_client "$PFL_SAMPLES")
    for v in "${VARIANTS[@]}"; do run_fedsilo pfl "$v" "$rep" --model cnn_playerfl "${pfl[@]}"; done
    # PyTorch evaluates on the first 2,000 test images only (its evaluation is not part of the samples/s)
    pt=(--rounds "$PFL_ROUNDS" --client-samples "$PFL_SAMPLES" --test-samples 2000)
    run_torch pfl "torch as installed (t2)" "$rep" "" --threads 2 "${pt[@]}"
    run_torch pfl "torch tuned (SkylakeX, t2, blas1)" "$rep" SkylakeX --threads 2 --blas-threads 1 "${pt[@]}"
  fi
done

echo "FMA peak after the runs:"
measure_peak
measure_vcpus after
$PY "$ROOT/bench/perf_tools.py" compare "$RUNS" "$PEAKS" | tee "$OUT/summary.txt"
bench_load_average_at_end
