#!/usr/bin/env bash
# label: integration
# timeout: 900
# cost: 63
# The repository stands on its own: HEAD is cloned alone into an empty temporary folder (nothing
# beside it, so no ../anything can be read), and README.md's commands run there as a new user types
# them, shortened only in rounds:
#   * quick start: `bash jobs/quickstart.sh` as written (set-up, FedAvg and Local on the quickstart
#     config, the comparison table), building only the fedsilo target (FEDSILO_BUILD_TARGETS; ccache
#     makes the compile cheap);
#   * "Running an experiment", in a clone without out/ (a user who skipped the quick start):
#     `source jobs/env.sh`, the W1 config for one round, the local run into the missing out/ for one
#     round, `build/fedsilo --help`: each must exit 0 and leave its results file;
#   * every configs/*.ini passes `--dry-run` from the repository root (the CIFAR-10 and EMNIST ones on
#     small generated files of their formats);
#   * the heart-disease protocol (configs/playerfl_heart.ini, 2 rounds) runs on the data the clone
#     ships, from another directory;
#   * `cmake --install` puts fedsilo and fedsilo-analysis in a prefix, and the wrapper summarises the
#     quick start's files from another directory; the installed fedsilo runs the heart protocol on
#     the installed copy of its data;
#   * nothing tracked names a path outside the repository (a sibling folder, the build machine's paths,
#     the project's unpublished reference notes).
# Every step runs even when an earlier one failed; the failures are listed at the end.
TEST_NAME=test_fresh_clone
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
t_start=$(date +%s)
LOGS=$WORK/logs
mkdir -p "$LOGS" "$WORK/alone"
CLONE=$WORK/alone/fedsilo
git -C "$FEDSILO_SOURCE_DIR" rev-parse --git-dir >/dev/null 2>&1 ||
  die "$FEDSILO_SOURCE_DIR is not a git checkout: this test clones the repository's HEAD"
git clone --quiet --no-hardlinks "$FEDSILO_SOURCE_DIR" "$CLONE" >"$LOGS/clone.log" 2>&1 ||
  die "git clone failed: $(tail -3 "$LOGS/clone.log")"
[ "$(ls -A "$WORK/alone")" = fedsilo ] || die "the clone's folder holds more than the clone"
log "cloned $(git -C "$CLONE" rev-parse --short HEAD) into an empty folder"

# A new user's environment: none of the knobs the outer build or ctest may have set.
unset FEDSILO_BUILD_DIR FEDSILO_OUT FEDSILO_RANKS FEDSILO_EXE FEDSILO_ROOT FEDSILO_SOURCE_DIR FEDSILO_BINARY_DIR

# step NAME CMD...: runs CMD in the clone, output to $LOGS/NAME.log; a non-zero exit is a failure.
step() {
  local name=$1 rc=0 t0
  shift
  t0=$(date +%s)
  (cd "$CLONE" && "$@") >"$LOGS/$name.log" 2>&1 || rc=$?
  if [ "$rc" = 0 ]; then
    log "$name: ok ($(($(date +%s) - t0)) s)"
  else
    # fedsilo's own error line when there is one (mpirun's report follows it), else the last lines
    fail "$name: exit $rc: $( (grep -m1 'error' "$LOGS/$name.log" || tail -3 "$LOGS/$name.log") | tr '\n' ' ')"
  fi
  return "$rc"
}
results_ok() { # FILE...: complete results files (a final accuracy in /summary)
  "$PY" - "$@" <<'PYEOF'
import sys, h5py
for path in sys.argv[1:]:
    with h5py.File(path, "r") as f:
        assert "summary" in f and "rounds" in f, f"{path}: no /summary or /rounds"
PYEOF
}

# ---- Quick start, as written (only the build is narrowed to the executable) ------------------------
if FEDSILO_BUILD_TARGETS=fedsilo step quickstart bash jobs/quickstart.sh; then
  results_ok "$CLONE/out/quickstart_fedavg.h5" "$CLONE/out/quickstart_local.h5" ||
    fail "quickstart: out/quickstart_{fedavg,local}.h5 missing or incomplete"
  grep -q "quickstart_local.h5" "$LOGS/quickstart.log" && grep -q "| fedavg " "$LOGS/quickstart.log" ||
    fail "quickstart: no comparison table in its output: $(tail -3 "$LOGS/quickstart.log" | tr '\n' ' ')"
fi
[ -x "$CLONE/build/fedsilo" ] || die "the quick start built no build/fedsilo; nothing else can run"
mkdir -p "$WORK/quickstart"
cp "$CLONE"/out/quickstart_*.h5 "$WORK/quickstart/" 2>/dev/null || true

# ---- Running an experiment (README), in a clone without out/ -----------------------------------------
# The README's lines verbatim, each followed by --rounds 1.
W1_LINE="mpirun -n 2 build/fedsilo --config configs/w1_fedavg_fmnist.ini"
LOCAL_LINE="mpirun -n 4 build/fedsilo --config configs/quickstart.ini --algorithm local --train.lr 0.02 --output out/local.h5"
for line in "source jobs/env.sh" "$W1_LINE" "$LOCAL_LINE"; do
  grep -qF -- "$line" "$CLONE/README.md" || fail "README.md no longer has the line '$line' this test runs"
done
rm -rf "$CLONE/out"
step w1_one_round bash -c "source jobs/env.sh && $W1_LINE --rounds 1" &&
  { results_ok "$CLONE/out/w1_fedavg.h5" || fail "W1: out/w1_fedavg.h5 missing or incomplete"; }
rm -rf "$CLONE/out"
step local_into_missing_out bash -c "source jobs/env.sh && $LOCAL_LINE --rounds 1" &&
  { results_ok "$CLONE/out/local.h5" || fail "local run: out/local.h5 missing or incomplete"; }
step help build/fedsilo --help && { grep -q "^Algorithms:" "$LOGS/help.log" || fail "--help lists no algorithms"; }

# ---- Every shipped configuration is valid where it is, from the repository root ----------------------
# (CIFAR-10 and EMNIST are not shipped: those configs read small generated files of the same formats.)
/usr/bin/python3 "$CLONE/tests/integration/lib/image_data.py" "$WORK/images" || fail "could not generate the image data"
for cfg in "$CLONE"/configs/*.ini; do
  data=()
  for d in cifar10 emnist; do grep -q "^dataset = $d$" "$cfg" && data=(--data.dir "$WORK/images/$d"); done
  step "dry_run_$(basename "$cfg" .ini)" build/fedsilo --config "configs/$(basename "$cfg")" "${data[@]}" --dry-run || true
done

# ---- dataset = heart: the shipped UCI files, found by the executable from any directory -------------
step heart_from_clone bash -c "cd / && '$CLONE/build/fedsilo' --config '$CLONE/configs/playerfl_heart.ini' \
  --rounds 2 --output '$WORK/heart_clone.h5'" && { results_ok "$WORK/heart_clone.h5" || fail "heart: no complete results file"; }

# ---- cmake --install: fedsilo and the analysis wrapper, usable from any directory --------------------
if step install cmake --install build --prefix "$WORK/prefix"; then
  [ -x "$WORK/prefix/bin/fedsilo" ] || fail "install: no bin/fedsilo"
  step heart_installed bash -c "cd / && '$WORK/prefix/bin/fedsilo' --config '$CLONE/configs/playerfl_heart.ini' \
    --rounds 2 --data.dir '' --output '$WORK/heart_installed.h5'" &&
    { results_ok "$WORK/heart_installed.h5" || fail "installed heart run: no complete results file"; }
  (cd / && "$WORK/prefix/bin/fedsilo-analysis" summary "$WORK"/quickstart/quickstart_*.h5) >"$LOGS/wrapper.log" 2>&1 &&
    grep -q "| local " "$LOGS/wrapper.log" ||
    fail "installed fedsilo-analysis summary from /: $(tail -3 "$LOGS/wrapper.log" | tr '\n' ' ')"
fi

# ---- Nothing names a path outside the repository -----------------------------------------------------
# (The bracketed letters keep this file itself out of the match, and out of the same grep run by hand.)
outside=$(git -C "$CLONE" grep -nE -e '\.\./share[d]' -e '/wor[k]/' -e 'ALGORITHM[S]\.md' -e 'DESIG[N]\.md' \
  -e 'HPC_NOTE[S]\.md' -e 'PERF_BASELIN[E]' || true)
[ -z "$outside" ] || fail "paths outside the repository are named in $(wc -l <<<"$outside") line(s):
$outside"

log "whole test: $(($(date +%s) - t_start)) s"
finish
