#!/usr/bin/env bash
# fedsilo against PyTorch on one training step (forward, loss, backward, SGD) of the PLayer-FL presets
# beyond FashionMNIST: cnn_playerfl_cifar (five 3x3 convolutions, 3 x 32 x 32 images, batch 32) and
# transformer_playerfl (d = 768, 119 tokens, batch 8), both on one thread: fedsilo_bench's PaperStep/
# (bench/step_bench.cpp) and bench/torch_steps.py (the same layers in PyTorch as installed, one
# thread), alternating repetition by repetition, with the FP32 FMA peak (FmaPeak/avx512) measured in
# each fedsilo_bench run. All times are CPU time, so the figures of one run share the machine's load.
# A benchmark, not a test: prints figures.
#
#   bash bench/compare_torch_steps.sh                # 3 repetitions
#   options: --build DIR (default build; needs bench/fedsilo_bench)  --reps N  --steps N (PyTorch steps
#            per repetition, default 3)  --no-torch  --out DIR (default out/bench/steps-<time>)
#
# Per model it prints the medians over the repetitions of GFLOP/s (exact training FLOPs,
# bench/step_bench.cpp), their share of the FMA peak (the median FmaPeak/avx512 of the runs) and
# fedsilo / PyTorch, with each repetition's figures and load average. Without an importable torch
# (Debian's python3-torch) it says so in one line and prints fedsilo's figures alone.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
BUILD=$ROOT/build
REPS=3
STEPS=3
TORCH_RUNS=1
OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --steps) STEPS=$2; shift ;;
    --no-torch) TORCH_RUNS=0 ;;
    --out) OUT=$2; shift ;;
    -h|--help) bench_help; exit 0 ;;
    *) bench_unknown_option "$1" ;;
  esac
  shift
done
bench_positive_integers REPS STEPS
BUILD=$(cd "$BUILD" && pwd)
BENCH=$BUILD/bench/fedsilo_bench
[ -x "$BENCH" ] || bench_usage_error "no $BENCH (cmake --build $BUILD --target fedsilo_bench)"
PY=/usr/bin/python3
if [ "$TORCH_RUNS" = 1 ] && ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "# PyTorch: not measured, 'import torch' fails in $PY (apt-get install python3-torch); fedsilo alone"
  TORCH_RUNS=0
fi
bench_out_dir steps
RUNS=$OUT/runs.jsonl
: >"$RUNS"
echo "# fedsilo $BENCH vs bench/torch_steps.py, $REPS repetitions, 1 thread each;" \
  "$(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)); raw output in $OUT"
for rep in $(seq 1 "$REPS"); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  "$BENCH" --benchmark_filter='^(FmaPeak/avx512|PaperStep/.*)$' --benchmark_format=json \
    --benchmark_out="$OUT/fedsilo_$rep.json" >"$OUT/fedsilo_$rep.log" 2>&1 || bench_failed fedsilo_bench "$OUT/fedsilo_$rep.log"
  "$PY" - "$OUT/fedsilo_$rep.json" "$rep" "$load" >>"$RUNS" <<'PYEOF'
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
for b in runs:
    name = "peak" if b["name"].startswith("FmaPeak") else ("cifar" if "model:0" in b["name"] else "transformer")
    print(json.dumps({"prog": "fedsilo", "model": name, "rep": int(sys.argv[2]), "load": float(sys.argv[3]),
                      "gflops": b["GFLOP/s"]}))
PYEOF
  if [ "$TORCH_RUNS" = 1 ]; then
    for m in cifar transformer; do
      batch=$([ $m = cifar ] && echo 32 || echo 8)
      env -u OPENBLAS_CORETYPE -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS \
        "$PY" "$ROOT/bench/torch_steps.py" --model $m --batch "$batch" --steps "$STEPS" >"$OUT/torch_${m}_$rep.json" \
        2>"$OUT/torch_${m}_$rep.log" || bench_failed torch_steps.py "$OUT/torch_${m}_$rep.log"
      "$PY" -c 'import json, sys; r = json.load(open(sys.argv[1])); print(json.dumps({"prog": "torch", "model": r["model"], "rep": int(sys.argv[2]), "load": float(sys.argv[3]), "gflops": r["gflops"]}))' \
        "$OUT/torch_${m}_$rep.json" "$rep" "$load" >>"$RUNS"
    done
  fi
  echo "  repetition $rep done (load average $load)"
done
"$PY" - "$RUNS" <<'PYEOF' | tee "$OUT/summary.txt"
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
med = lambda xs: statistics.median(xs) if xs else float("nan")
def g(prog, model):
    return [r["gflops"] for r in rows if r["prog"] == prog and r["model"] == model]
peak = med(g("fedsilo", "peak"))
print(f"FMA peak (FmaPeak/avx512, CPU time, median of the runs): {peak:.1f} GFLOP/s; per repetition",
      ", ".join(f"{x:.1f}" for x in g("fedsilo", "peak")))
print(f"{'model':<28}{'fedsilo GFLOP/s':>16}{'% peak':>8}{'PyTorch GFLOP/s':>17}{'% peak':>8}{'fedsilo/PyTorch':>17}")
for model, label in (("cifar", "cnn_playerfl_cifar, b32"), ("transformer", "transformer_playerfl, b8")):
    f, t = med(g("fedsilo", model)), med(g("torch", model))
    ratio = f"{f / t:.2f}x" if g("torch", model) else "not measured"
    tcol = f"{t:17.1f}{100 * t / peak:7.0f}%" if g("torch", model) else f"{'-':>17}{'-':>8}"
    print(f"{label:<28}{f:16.1f}{100 * f / peak:7.0f}%{tcol}{ratio:>17}")
    for rep in sorted({r["rep"] for r in rows}):
        per = {r["prog"]: r for r in rows if r["rep"] == rep and r["model"] == model}
        line = f"  rep {rep} (load {per['fedsilo']['load']:.1f}): fedsilo {per['fedsilo']['gflops']:.1f}"
        if "torch" in per:
            line += f", PyTorch {per['torch']['gflops']:.1f} ({per['fedsilo']['gflops'] / per['torch']['gflops']:.2f}x)"
        print(line)
PYEOF
bench_load_average_at_end
