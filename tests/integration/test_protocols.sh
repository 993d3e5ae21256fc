#!/usr/bin/env bash
# label: integration
# timeout: 1200
# cost: 112
# The client training protocol end to end (PLayer-FL authors' style: Adam with AMSGrad and weight
# decay, moments kept per client, cosine lr, Kaiming-normal weights with zero biases, inputs
# normalised by the data's own statistics, augmented training images, the first N training images):
#   * fedavg, ditto (a second, personal optimizer state) and fedbabu (a frozen head under Adam) give
#     identical results at 1, 2 and 4 ranks;
#   * stopped by SIGTERM at 2 ranks and resumed at 3, they finish identical to the uninterrupted run
#     (the kept optimizer states travel in the checkpoint, by client id);
#   * keep differs from reset (the kept state is used);
#   * model.init loads /model/global of a results file and the global model of a checkpoint exactly,
#     and refuses a model of other layer blocks, even of the same total size (exit 2, one line, no
#     results file), and a damaged checkpoint or one without its layer table (exit 3).
TEST_NAME=test_protocols
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir

PROTO=("${TINY[@]}" --seed 7 --rounds 4 --data.limit 3000 --fl.clients_per_round 3 --train.batch 16
  --train.optimizer adam --train.amsgrad true --train.weight_decay 1e-4 --train.lr 0.003
  --train.optimizer_state keep --train.lr_schedule cosine --train.lr_min 0.0005
  --model.init_scheme kaiming_normal --model.init_bias zero --data.normalize mean_std
  --data.augment affine --data.augment_scale 0.9,1.1 --data.augment_flip true --data.augment_crop_padding 2)

run_to() {  # LOG NP ARGS...: sets RC
  local logf=$1 np=$2
  shift 2
  RC=0
  "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "$@" >"$logf" 2>&1 || RC=$?
}

for alg in fedavg ditto fedbabu; do
  d="$WORK/$alg"
  mkdir -p "$d"
  A=("${PROTO[@]}" --algorithm "$alg")
  for np in 1 2 4; do
    run_to "$d/np$np.log" "$np" "${A[@]}" --output "$d/np$np.h5"
    [ "$RC" = 0 ] || { fail "$alg np=$np exited $RC: $(grep -m1 error "$d/np$np.log")"; continue 2; }
  done
  for np in 2 4; do
    h5_same "$d/np1.h5" "$d/np$np.h5" && log "$alg: np $np identical to np 1" || fail "$alg: np $np differs from np 1"
  done
  # SIGTERM at 2 ranks once the run is under way (a test-only pause after each round), resume at 3.
  FEDSILO_FAULT=slow:rank=0,ms=300 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${A[@]}" --output "$d/run.h5" >"$d/int.log" 2>&1 &
  pid=$!
  if wait_for_line '^ +0 +[0-9]' "$d/int.log" 120 "$pid"; then signal_ranks TERM "$pid" || true; fi
  RC=0
  wait "$pid" || RC=$?
  if [ "$RC" != 75 ] || [ ! -f "$d/run.h5.ckpt" ]; then
    fail "$alg: the interrupted run exited $RC (expected 75 with a checkpoint)"
    tail -3 "$d/int.log" >&2
    continue
  fi
  cp "$d/run.h5.ckpt" "$d/saved.ckpt"
  run_to "$d/res.log" 3 "${A[@]}" --output "$d/run.h5" --resume
  if [ "$RC" = 0 ] && h5_same "$d/np1.h5" "$d/run.h5"; then
    log "$alg: $(grep -m1 -o 'stopped before round [0-9]*' "$d/int.log"), resumed at 3 ranks: identical"
  else
    fail "$alg: the resumed run (exit $RC) differs from the uninterrupted one"
  fi
done

# keep vs reset: the kept moments change the result.
d="$WORK/fedavg"
run_to "$d/reset.log" 2 "${PROTO[@]}" --algorithm fedavg --train.optimizer_state reset --output "$d/reset.h5"
if [ "$RC" = 0 ] && ! h5_same "$d/np1.h5" "$d/reset.h5" >/dev/null; then
  log "optimizer_state keep differs from reset"
else
  fail "optimizer_state = reset gave the same results as keep (or failed: exit $RC)"
fi

# model.init: with no local training (train.epochs = 0) the final global model is the initial one.
same_global() {  # RESULTS SOURCE DATASET
  "$PY" - "$@" <<'PYEOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as a, h5py.File(sys.argv[2], "r") as b:
    x, y = a["model/global"][:], b[sys.argv[3]][:]
    sys.exit(0 if x.shape == y.shape and np.array_equal(x, y) else 1)
PYEOF
}
I=("${PROTO[@]}" --algorithm fedavg --rounds 1 --train.epochs 0)
run_to "$d/init_results.log" 2 "${I[@]}" --model.init "$d/np1.h5" --output "$d/init_results.h5"
[ "$RC" = 0 ] && same_global "$d/init_results.h5" "$d/np1.h5" model/global &&
  log "model.init from a results file: loaded exactly" || fail "model.init from a results file (exit $RC)"
run_to "$d/init_ckpt.log" 2 "${I[@]}" --model.init "$d/saved.ckpt" --output "$d/init_ckpt.h5"
[ "$RC" = 0 ] && same_global "$d/init_ckpt.h5" "$d/saved.ckpt" replicated/driver/global &&
  log "model.init from a checkpoint: loaded exactly" || fail "model.init from a checkpoint (exit $RC)"
# refused SOURCE EXIT PATTERN HIDDEN: model.init = SOURCE with --model.hidden HIDDEN exits EXIT with one
# error line matching PATTERN and leaves no results file.
refused() {
  run_to "$d/refused.log" 2 "${I[@]}" --model.hidden "$4" --model.init "$d/$1" --output "$d/refused.h5"
  local lines
  lines=$(grep -c '^fedsilo: error' "$d/refused.log" || true)
  if [ "$RC" = "$2" ] && [ "$lines" = 1 ] && grep -q "model.init = $d/$1: $3" "$d/refused.log" &&
    [ ! -e "$d/refused.h5" ] && [ ! -e "$d/refused.h5.partial" ]; then
    log "model.init refused ($1, hidden $4): $(grep '^fedsilo: error' "$d/refused.log")"
  else
    fail "model.init of $1 with hidden $4: exit $RC (expected $2), $lines error lines: $(grep -m1 error "$d/refused.log")"
  fi
}
# Another model shape: exit 2 naming the first difference. Hidden 18,390 has the same number of
# parameters as 32 (25,450) in three blocks instead of two: the layer table, not the total, refuses it.
for src in np1.h5 saved.ckpt; do
  refused "$src" 2 '.*parameters' 16
  refused "$src" 2 'the stored model has 2 layer blocks, the configured model 3' 18,390
done
# A damaged checkpoint model (one value changed, its checksum kept) and a checkpoint without its layer
# table (as older formats are): exit 3 (data error).
"$PY" - "$d/saved.ckpt" "$d/damaged.ckpt" "$d/untabled.ckpt" <<'PYEOF'
import shutil, sys, h5py
shutil.copy(sys.argv[1], sys.argv[2])
shutil.copy(sys.argv[1], sys.argv[3])
with h5py.File(sys.argv[2], "r+") as f:
    f["replicated/driver/global"][0] += 1.0
with h5py.File(sys.argv[3], "r+") as f:
    del f.attrs["model_layers"]
PYEOF
refused damaged.ckpt 3 '/replicated/driver/global does not match its checksum' 32
refused untabled.ckpt 3 'a checkpoint without a readable layer table' 32
finish
