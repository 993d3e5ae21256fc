#!/usr/bin/env bash
# Before/after kernel figures: builds fedsilo_bench (this tree's bench/ sources) against the sources of
# another revision (default: HEAD, i.e. the working tree's uncommitted changes are "after"), then
# runs the two benchmark binaries alternately and prints, per benchmark, the median CPU time of
# each and their ratio. Alternating in one script is what makes the ratio meaningful on a shared,
# noisy machine (docs/performance.md: run-to-run noise of up to 30%); the absolute times are not.
#
#   bash bench/ab_baseline.sh [--rev REV] [--build DIR] [--rounds N] [--filter REGEX]
#   default filter: the W1/W2 training steps, Dense, Conv2D (default chunk), ExactSum, Eval
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
REV=HEAD
BUILD=$ROOT/build
ROUNDS=5
FILTER='Step/|Dense/|Conv2D/.*chunk:0|ExactSum|Eval|LocalTrainer'
while [ $# -gt 0 ]; do
  case "$1" in
    --rev) REV=$2; shift ;;
    --build) BUILD=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --filter) FILTER=$2; shift ;;
    -h|--help) bench_help; exit 0 ;;
    *) bench_unknown_option "$1" ;;
  esac
  shift
done
bench_positive_integers ROUNDS
[ -d "$BUILD" ] || bench_usage_error "--build $BUILD: no such directory"
BUILD=$(cd "$BUILD" && pwd)
NEW=$BUILD/bench/fedsilo_bench
[ -x "$NEW" ] || bench_usage_error "no $NEW: build the fedsilo_bench target first"
SHA=$(git -C "$ROOT" rev-parse --short "$REV" 2>/dev/null) || bench_usage_error "--rev $REV: not a revision of this repository"
BASE=${TMPDIR:-/tmp}/fedsilo-ab-$SHA
BENCH_SOURCES=("$ROOT"/bench/*.cpp "$ROOT"/bench/*.hpp "$ROOT/bench/CMakeLists.txt")
stale() { # the baseline binary is missing or older than one of this tree's benchmark sources
  local f
  [ -x "$BASE/build/bench/fedsilo_bench" ] || return 0
  for f in "${BENCH_SOURCES[@]}"; do [ "$f" -nt "$BASE/build/bench/fedsilo_bench" ] && return 0; done
  return 1
}
if stale; then
  echo "# building the benchmark against $REV ($SHA) in $BASE"
  rm -rf "$BASE/src" "$BASE/bench"
  mkdir -p "$BASE"
  git -C "$ROOT" archive "$SHA" | tar -x -C "$BASE"
  rm -rf "$BASE/bench"
  mkdir -p "$BASE/bench"
  cp "${BENCH_SOURCES[@]}" "$BASE/bench/"
  # the benchmarks' allocation counter, for revisions older than it
  [ -f "$BASE/src/core/malloc_counter.hpp" ] || cp "$ROOT/src/core/malloc_counter.hpp" "$BASE/src/core/"
  launcher=()
  command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$BASE" -B "$BASE/build" -G Ninja "${launcher[@]}" -DFEDSILO_BUILD_TESTS=OFF \
    -DCMAKE_CXX_FLAGS=-DFEDSILO_BENCH_BASELINE > "$BASE/configure.log" 2>&1
  cmake --build "$BASE/build" -j2 --target fedsilo_bench > "$BASE/build.log" 2>&1 ||
    bench_failed "the baseline build" "$BASE/build.log"
fi
OLD=$BASE/build/bench/fedsilo_bench
OUT=$(mktemp -d "${TMPDIR:-/tmp}/fedsilo_ab.XXXXXX")
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "# $ROUNDS alternating rounds, filter '$FILTER'; load average $(cut -d' ' -f1-3 /proc/loadavg)"
# Alternate per benchmark (old, new, old, new, ...): pairs run seconds apart, under the same load.
mapfile -t NAMES < <("$NEW" --benchmark_filter="$FILTER" --benchmark_list_tests=true 2> /dev/null)
for r in $(seq 1 "$ROUNDS"); do
  i=0
  for name in "${NAMES[@]}"; do
    i=$((i + 1))
    exact="^${name}\$"
    "$OLD" --benchmark_filter="$exact" --benchmark_format=json --benchmark_min_time=0.1 > "$OUT/old_${r}_$i.json" 2> /dev/null || true
    "$NEW" --benchmark_filter="$exact" --benchmark_format=json --benchmark_min_time=0.1 > "$OUT/new_${r}_$i.json" 2> /dev/null || true
  done
done
/usr/bin/python3 - "$OUT" "$SHA" <<'EOF'
import glob, json, sys
import numpy as np
out, sha = sys.argv[1], sys.argv[2]
def load(kind):
    d = {}
    for f in sorted(glob.glob(f"{out}/{kind}_*.json")):
        try:
            bs = json.load(open(f))["benchmarks"]
        except (ValueError, KeyError):
            continue
        for b in bs:
            if b.get("run_type") == "iteration" and not b.get("error_occurred"):
                    d.setdefault(b["name"], []).append(b["cpu_time"] if b["time_unit"] == "ns" else
                                                       b["cpu_time"] * {"us": 1e3, "ms": 1e6}[b["time_unit"]])
    return d
old, new = load("old"), load("new")
print(f"{'benchmark':<58} {'before (' + sha + ')':>16} {'after':>12} {'speedup':>8}")
for name in new:
    if name not in old:
        continue
    o, n = float(np.median(old[name])), float(np.median(new[name]))
    unit, div = ("ms", 1e6) if o > 1e6 else ("us", 1e3)
    print(f"{name:<58} {o / div:>13.1f} {unit} {n / div:>9.1f} {unit} {o / n:>7.2f}x")
EOF
rm -rf "$OUT"
bench_load_average_at_end
