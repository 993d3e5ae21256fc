#!/usr/bin/env bash
# label: integration
# timeout: 300
# cost: 107
# dataset = heart through the real executable, on configs/playerfl_heart.ini as shipped (2 rounds):
#   * run from another working directory, the executable finds the shipped data/heart_disease itself;
#   * PLayer-FL with the sensitivity rule's split, FedBABU and FedAvg, and FLamby's variant, give
#     identical results files at 1, 2 and 4 ranks;
#   * a run stopped by SIGTERM and resumed at another rank count equals the uninterrupted run;
#   * a damaged copy of one hospital's file is exit 3 naming it, with no results file; clients = 5 and
#     a partition other than natural are exit 2;
#   * `cmake --install` of the build under test: the installed fedsilo, run from /, reads the installed
#     copy of the data (share/fedsilo/data/heart_disease) and gives the same results.
TEST_NAME=test_heart
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
CFG=$FEDSILO_SOURCE_DIR/configs/playerfl_heart.ini
A=(--config "$CFG" --rounds 2 --overwrite)

# run NP OUT ARGS...: fedsilo at NP ranks from / (not the repository), output and log beside OUT.
run() {
  local np=$1 out=$2
  shift 2
  (cd / && "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "${A[@]}" "$@" --output "$out") >"$out.log" 2>&1
}

for c in "playerfl_auto|--algorithm playerfl --playerfl.split auto" "fedbabu|--algorithm fedbabu" \
  "flamby_fedavg|--algorithm fedavg --data.heart_variant flamby"; do
  IFS='|' read -r name options <<<"$c"
  read -r -a extra <<<"$options"
  ok=1
  for np in 1 2 4; do
    run "$np" "$WORK/${name}_np$np.h5" "${extra[@]}" || { ok=0; fail "$name np=$np: $(tail -2 "$WORK/${name}_np$np.h5.log")"; }
  done
  [ "$ok" = 1 ] || continue
  grep -q "data_heart\|on heart" "$WORK/${name}_np1.h5.log" || fail "$name: the banner does not name the heart data"
  h5_same "$WORK/${name}_np1.h5" "$WORK/${name}_np2.h5" && h5_same "$WORK/${name}_np1.h5" "$WORK/${name}_np4.h5" &&
    log "$name: identical at 1, 2 and 4 ranks" || fail "$name: results differ across rank counts (above)"
done
"$PY" - "$WORK/playerfl_auto_np1.h5" "$WORK/flamby_fedavg_np1.h5" <<'PYEOF' || fail "the results do not describe the heart data"
import sys, h5py
for path, classes in zip(sys.argv[1:], (5, 2)):
    with h5py.File(path, "r") as f:
        cfg = f.attrs["config"]
        cfg = cfg.decode() if isinstance(cfg, bytes) else cfg
        assert "dataset = heart" in cfg and "heart_disease" in cfg, cfg
        assert f["clients/num_train"].shape == (4,), f["clients/num_train"]
        assert f["rounds/client_accuracy"].shape == (2, 4)
PYEOF

# SIGTERM mid-run at 2 ranks (a pause after each round lets it land), resumed at 4.
R=(--algorithm playerfl --rounds 4)
run 1 "$WORK/ref.h5" "${R[@]}" || fail "uninterrupted 4-round run: $(tail -2 "$WORK/ref.h5.log")"
(cd / && FEDSILO_FAULT=slow:rank=0,ms=400 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${A[@]}" "${R[@]}" --output "$WORK/term.h5") \
  >"$WORK/term.log" 2>&1 &
PID=$!
if wait_for_line '^ +1 ' "$WORK/term.log" 60 "$PID"; then signal_ranks TERM "$PID" || true; fi
rc=0
wait "$PID" || rc=$?
if [ "$rc" = 75 ] && [ -f "$WORK/term.h5.ckpt" ]; then
  (cd / && "$MPIEXEC" -n 4 "$FEDSILO_EXE" "${A[@]}" "${R[@]}" --output "$WORK/term.h5" --resume) >"$WORK/res.log" 2>&1 ||
    fail "resume: $(tail -2 "$WORK/res.log")"
  grep -q '^resuming from' "$WORK/res.log" || fail "the resumed run did not say it resumed"
  h5_same "$WORK/ref.h5" "$WORK/term.h5" && log "stopped at 2 ranks, resumed at 4: identical to the uninterrupted run" ||
    fail "resumed results differ from the uninterrupted run (above)"
else
  fail "SIGTERM run: exit $rc (expected 75 with a checkpoint): $(tail -3 "$WORK/term.log")"
fi

# Bad input: a damaged hospital file, a client count that is not the four hospitals, another partition.
mkdir -p "$WORK/damaged"
cp "$FEDSILO_SOURCE_DIR"/data/heart_disease/processed.*.data "$WORK/damaged/"
sed -i '1s/^63/64/' "$WORK/damaged/processed.cleveland.data"
rc=0
run 2 "$WORK/damaged.h5" --data.dir "$WORK/damaged" || rc=$?
[ "$rc" = 3 ] && grep -q "processed.cleveland.data.*SHA-256" "$WORK/damaged.h5.log" && [ ! -e "$WORK/damaged.h5" ] &&
  log "damaged file: exit 3 naming it" || fail "damaged file: exit $rc: $(tail -2 "$WORK/damaged.h5.log")"
for bad in "--clients 5|clients = 5" "--partition.scheme iid|partition.scheme = iid"; do
  IFS='|' read -r options message <<<"$bad"
  read -r -a extra <<<"$options"
  rc=0
  run 2 "$WORK/bad.h5" "${extra[@]}" || rc=$?
  [ "$rc" = 2 ] && grep -q "$message" "$WORK/bad.h5.log" && [ "$(grep -c 'error' "$WORK/bad.h5.log")" = 1 ] &&
    log "$options: exit 2, one line" || fail "$options: exit $rc: $(cat "$WORK/bad.h5.log")"
done

# The installed executable reads the installed data.
if [ -n "${FEDSILO_BINARY_DIR:-}" ]; then
  cmake --install "$FEDSILO_BINARY_DIR" --prefix "$WORK/prefix" >"$WORK/install.log" 2>&1 || die "cmake --install: $(tail -3 "$WORK/install.log")"
  for f in processed.cleveland.data processed.hungarian.data processed.switzerland.data processed.va.data README.md; do
    cmp -s "$FEDSILO_SOURCE_DIR/data/heart_disease/$f" "$WORK/prefix/share/fedsilo/data/heart_disease/$f" ||
      fail "install: share/fedsilo/data/heart_disease/$f missing or different"
  done
  (cd / && "$WORK/prefix/bin/fedsilo" "${A[@]}" --algorithm fedbabu --output "$WORK/installed.h5") >"$WORK/installed.log" 2>&1 ||
    fail "installed fedsilo: $(tail -2 "$WORK/installed.log")"
  "$PY" - "$WORK/installed.h5" "$WORK/prefix" <<'PYEOF' || fail "the installed run did not read the installed data"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    cfg = f.attrs["config"]
    cfg = cfg.decode() if isinstance(cfg, bytes) else cfg
    assert f"dir = {sys.argv[2]}/share/fedsilo/data/heart_disease" in cfg, cfg
PYEOF
  h5_same "$WORK/fedbabu_np1.h5" "$WORK/installed.h5" && log "installed fedsilo: its own data, the same results" ||
    fail "installed fedsilo: results differ from the build's (above)"
fi
finish
