#!/usr/bin/env bash
# label: integration
# timeout: 900
# cost: 58
# fedsilo as an installed package (docs/extending.md):
#   1. `cmake --install` of the build under test into a temporary prefix: the tree holds the executable,
#      the analysis wrapper, the nine static libraries, the CMake package, the public headers (every
#      `#include "X/..."` in them resolves inside the installed tree; none includes mpi.h or HDF5; io and
#      comm's MPI internals are not installed) and no path of the source or build tree;
#   2. the installed man page renders without groff warnings and names every option and algorithm of
#      `fedsilo --help`;
#   3. the prefix is moved elsewhere (the package must be relocatable) and examples/custom_algorithm is
#      configured with find_package(fedsilo) against it and built (ccache, -j2);
#   4. its algorithm `server_momentum` runs through the usual options: listed in --help, a bad option
#      value is exit 2 naming it, fl.server_optimizer refused (exit 2), identical results at 1 and 2
#      ranks, different from FedAvg's, and a run stopped by SIGTERM (exit 75) and resumed at another rank
#      count equals the uninterrupted run;
#   5. add_subdirectory: a parent project configures fedsilo as a subdirectory without its tests and
#      benchmarks, with the fedsilo:: aliases, and builds fedsilo::core.
# Prints the time of each part and of the whole test.
TEST_NAME=test_install_example
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
: "${FEDSILO_BINARY_DIR:?FEDSILO_BINARY_DIR is not set: run this test through ctest}"
make_workdir
T0=$(now_ms)
part_t=$T0
part_done() {
  log "$1: $((($(now_ms) - part_t) / 1000)) s"
  part_t=$(now_ms)
}
P=$WORK/prefix
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$FEDSILO_SOURCE_DIR}

# ---- 1. the install tree -------------------------------------------------------------------------------
cmake --install "$FEDSILO_BINARY_DIR" --prefix "$P" >"$WORK/install.log" 2>&1 ||
  die "cmake --install failed: $(tail -3 "$WORK/install.log")"
for f in bin/fedsilo bin/fedsilo-analysis; do [ -x "$P/$f" ] || fail "install: no executable $f"; done
for m in core nn optim data comm io privacy fl app; do
  [ -f "$P/lib/libfedsilo_$m.a" ] || fail "install: no lib/libfedsilo_$m.a"
done
for f in fedsiloConfig.cmake fedsiloConfigVersion.cmake fedsiloTargets.cmake; do
  [ -f "$P/lib/cmake/fedsilo/$f" ] || fail "install: no lib/cmake/fedsilo/$f"
done
INC=$P/include/fedsilo
for h in fl/algorithm.hpp fl/algorithms/fedavg.hpp fl/aggregation.hpp app/run_main.hpp comm/communicator.hpp \
  core/config.hpp nn/model.hpp optim/optimizer.hpp data/dataset.hpp privacy/rdp_accountant.hpp; do
  [ -f "$INC/$h" ] || fail "install: public header $h missing"
done
for gone in io comm/mpi_handle.hpp comm/h5_mpio.hpp core/h5_handle.hpp core/malloc_counter.hpp \
  app/run_control.hpp app/config_parser.hpp; do
  [ ! -e "$INC/$gone" ] || fail "install: $gone is installed but is not public"
done
nheaders=$(find "$INC" -name '*.hpp' | wc -l)
unresolved=$(grep -rhoE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' "$INC" |
  sed -E 's/.*"([^"]+)".*/\1/' | sort -u | while read -r h; do [ -f "$INC/$h" ] || echo "$h"; done)
[ -z "$unresolved" ] || fail "installed headers include headers that are not installed: $(echo $unresolved)"
mpi=$(grep -rlE '#[[:space:]]*include[[:space:]]*[<"](mpi\.h|hdf5\.h|H5[A-Za-z]*\.h)' "$INC" || true)
[ -z "$mpi" ] || fail "installed headers include MPI or HDF5: $mpi"
[ -d "$P/share/fedsilo/python/analysis" ] && [ ! -e "$P/share/fedsilo/python/analysis/tests" ] ||
  fail "install: share/fedsilo/python/analysis missing, or with its tests"
[ -f "$P/share/fedsilo/examples/custom_algorithm/CMakeLists.txt" ] || fail "install: the example is not installed"
leaks=$(grep -rlF -e "$FEDSILO_SOURCE_DIR" -e "$FEDSILO_BINARY_DIR" "$P/lib/cmake" "$INC" || true)
[ -z "$leaks" ] || fail "installed files name the source or build tree: $leaks"
log "install tree: $(find "$P" -type f | wc -l) files, $nheaders public headers"
part_done "install and its tree"

# ---- 2. the man page ------------------------------------------------------------------------------------
MAN=$P/share/man/man1/fedsilo.1
if [ -f "$MAN" ]; then
  groff -man -Tutf8 -ww -z "$MAN" 2>"$WORK/groff.err" && [ ! -s "$WORK/groff.err" ] ||
    fail "fedsilo.1: groff warnings: $(head -3 "$WORK/groff.err")"
  # Rendered as a reader sees it (wide lines, no hyphenation, no bold), to compare words with --help.
  groff -man -Tascii -P-cbou -rLL=300n -rHY=0 "$MAN" >"$WORK/man.txt" 2>/dev/null
  "$FEDSILO_EXE" --help >"$WORK/help.txt"
  missing=""
  for o in $(grep -oE -- '--[a-z][a-z0-9_.-]*' "$WORK/help.txt" | sort -u); do
    grep -qF -- "$o" "$WORK/man.txt" || missing+="$o "
  done
  for a in $(algorithms); do grep -qE "^ +$a( |$)" "$WORK/man.txt" || missing+="$a "; done
  grep -qF "fedsilo $("$FEDSILO_EXE" --version | awk '{print $2}')" "$WORK/man.txt" || missing+="(version) "
  [ -z "$missing" ] || fail "fedsilo.1 lacks what --help has: $missing"
  log "man page: $(grep -c . "$WORK/man.txt") lines, every option and algorithm of --help"
else
  fail "install: no share/man/man1/fedsilo.1"
fi
part_done "man page"

# ---- 3. the example against the moved prefix -------------------------------------------------------------
mv "$P" "$WORK/moved"
P=$WORK/moved
EX=$WORK/build-example
cmake -S "$FEDSILO_SOURCE_DIR/examples/custom_algorithm" -B "$EX" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$P" "${launcher[@]}" >"$WORK/example-configure.log" 2>&1 ||
  die "the example does not configure against the installed fedsilo: $(grep -m3 -A3 'CMake Error' "$WORK/example-configure.log")"
cmake --build "$EX" -j2 >"$WORK/example-build.log" 2>&1 ||
  die "the example does not build: $(grep -m3 -E 'error|undefined' "$WORK/example-build.log")"
CUSTOM=$EX/fedsilo_custom
grep -q "fedsilo_DIR:PATH=$P/" "$EX/CMakeCache.txt" || fail "the example did not use the moved prefix: $(grep fedsilo_DIR "$EX/CMakeCache.txt")"
part_done "example configured and built"

# ---- 4. the example's algorithm through the usual options ------------------------------------------------
"$CUSTOM" --help >"$WORK/custom-help.txt"
grep -q '^  server_momentum: ' "$WORK/custom-help.txt" || fail "the example's --help does not list server_momentum"
grep -q -- '--server_momentum.beta' "$WORK/custom-help.txt" || fail "the example's --help lacks --server_momentum.beta"
grep -q '^  fedavg: ' "$WORK/custom-help.txt" || fail "the example lost the built-in algorithms"
RC=0
"$CUSTOM" "${TINY[@]}" --algorithm server_momentum --server_momentum.beta 1 --output "$WORK/bad.h5" \
  >"$WORK/bad.log" 2>&1 || RC=$?
[ "$RC" = 2 ] && grep -q 'server_momentum.beta = 1: expected a value in \[0, 1)' "$WORK/bad.log" ||
  fail "server_momentum.beta = 1: exit $RC, expected 2 naming the value: $(tail -1 "$WORK/bad.log")"
[ ! -e "$WORK/bad.h5" ] && [ ! -e "$WORK/bad.h5.partial" ] || fail "the refused run left a results file"
# Its server step is its own momentum: fedsilo's server optimizers (which FedAvg, its base, accepts) are refused.
RC=0
"$CUSTOM" "${TINY[@]}" --algorithm server_momentum --fl.server_optimizer momentum --output "$WORK/bad.h5" \
  >"$WORK/bad_opt.log" 2>&1 || RC=$?
[ "$RC" = 2 ] && grep -q 'fl.server_optimizer = momentum: algorithm = server_momentum' "$WORK/bad_opt.log" ||
  fail "server_momentum with fl.server_optimizer: exit $RC, expected 2 naming both: $(tail -1 "$WORK/bad_opt.log")"

SM=("${TINY[@]}" --algorithm server_momentum --server_momentum.beta 0.5 --rounds 6)
run() { # run LOG NP ARGS...: RC = exit code
  local logf=$1 np=$2
  shift 2
  RC=0
  "$MPIEXEC" -n "$np" "$CUSTOM" "$@" >"$logf" 2>&1 || RC=$?
}
run "$WORK/np1.log" 1 "${SM[@]}" --output "$WORK/np1.h5"
[ "$RC" = 0 ] || die "server_momentum at 1 rank exited $RC: $(tail -3 "$WORK/np1.log")"
run "$WORK/np2.log" 2 "${SM[@]}" --output "$WORK/np2.h5"
[ "$RC" = 0 ] || die "server_momentum at 2 ranks exited $RC: $(tail -3 "$WORK/np2.log")"
h5_complete "$WORK/np2.h5" || fail "server_momentum: incomplete results file"
h5_same "$WORK/np1.h5" "$WORK/np2.h5" && log "server_momentum: identical results at 1 and 2 ranks" ||
  fail "server_momentum: results differ between 1 and 2 ranks (above)"
run "$WORK/fedavg.log" 2 "${TINY[@]}" --algorithm fedavg --rounds 6 --output "$WORK/fedavg.h5"
[ "$RC" = 0 ] || fail "fedavg through the example exited $RC"
"$PY" - "$WORK/np2.h5" "$WORK/fedavg.h5" <<'PYEOF' || fail "server_momentum's results file (above)"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as sm, h5py.File(sys.argv[2], "r") as fa:
    alg = sm.attrs["algorithm"]; alg = alg.decode() if isinstance(alg, bytes) else alg
    assert alg == "server_momentum", f"algorithm attribute {alg!r}"
    cfg = sm.attrs["config"]; cfg = cfg.decode() if isinstance(cfg, bytes) else cfg
    assert "[server_momentum]\nbeta = 0.5\nlr = 1\n" in cfg, "the resolved config lacks [server_momentum]"
    d = np.abs(sm["model/global"][:] - fa["model/global"][:]).max()
    assert d > 1e-3, f"the global model equals FedAvg's (max diff {d}): the server step did nothing"
    print(f"    server_momentum differs from fedavg by up to {d:.3g} in the global model")
PYEOF

# Stopped by SIGTERM at 2 ranks (exit 75, checkpoint), resumed at 1 rank: identical to the uninterrupted run.
FEDSILO_FAULT=slow:rank=0,ms=300 "$MPIEXEC" -n 2 "$CUSTOM" "${SM[@]}" --output "$WORK/stop.h5" >"$WORK/stop.log" 2>&1 &
pid=$!
if wait_for_line '^ +1 ' "$WORK/stop.log" 120 "$pid"; then signal_ranks TERM "$pid" || true; fi
RC=0
wait "$pid" || RC=$?
if [ "$RC" = 75 ] && [ -f "$WORK/stop.h5.ckpt" ]; then
  run "$WORK/resume.log" 1 "${SM[@]}" --output "$WORK/stop.h5" --resume
  if [ "$RC" = 0 ] && grep -q '^resuming from' "$WORK/resume.log" && h5_same "$WORK/np2.h5" "$WORK/stop.h5"; then
    log "server_momentum: $(grep -o 'stopped before round [0-9]* of [0-9]*' "$WORK/stop.log") at 2 ranks, resumed at 1: identical"
  else
    fail "server_momentum: the resumed run (exit $RC) differs from the uninterrupted one or did not resume: $(tail -2 "$WORK/resume.log")"
  fi
else
  fail "server_momentum: the stopped run exited $RC (expected 75 with a checkpoint): $(tail -2 "$WORK/stop.log")"
fi
part_done "example runs (1 and 2 ranks, fedavg, stop and resume)"

# ---- 5. add_subdirectory ------------------------------------------------------------------------------
SUB=$WORK/parent
mkdir -p "$SUB"
cat >"$SUB/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.18)
project(parent LANGUAGES C CXX)
add_subdirectory("$FEDSILO_SOURCE_DIR" fedsilo)
foreach(t fedsilo::fedsilo fedsilo::fl fedsilo::app fedsilo::core)
  if(NOT TARGET \${t})
    message(FATAL_ERROR "no target \${t}")
  endif()
endforeach()
add_library(parent_uses_core STATIC parent.cpp)
target_link_libraries(parent_uses_core PRIVATE fedsilo::core)
EOF
printf '#include "core/strings.hpp"\nstd::string parentTrim(const std::string& s) { return fedsilo::trim(s); }\n' \
  >"$SUB/parent.cpp"
if cmake -S "$SUB" -B "$SUB/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >"$WORK/sub.log" 2>&1; then
  targets=$(cmake --build "$SUB/build" --target help 2>/dev/null)
  grep -qE '^(test_[a-z_]*|fedsilo_bench): ' <<<"$targets" &&
    fail "add_subdirectory: the tests or benchmarks are built as a subproject"
  grep -q '^fedsilo: ' <<<"$targets" || fail "add_subdirectory: no fedsilo executable target"
  cmake --build "$SUB/build" -j2 --target parent_uses_core >>"$WORK/sub.log" 2>&1 ||
    fail "add_subdirectory: a parent target using fedsilo::core does not build: $(grep -m2 error "$WORK/sub.log")"
  grep -q -- '-Wall' "$SUB/build/build.ninja" && fail "add_subdirectory: fedsilo's warning flags reach the parent's build"
else
  fail "add_subdirectory: the parent project does not configure: $(grep -m3 -A3 'CMake Error' "$WORK/sub.log")"
fi
part_done "add_subdirectory"

log "took $((($(now_ms) - T0) / 1000)) s"
finish
