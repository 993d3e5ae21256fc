#!/usr/bin/env bash
# label: integration
# timeout: 600
# cost: 105
# transformer_playerfl end to end on the generated `sequence` task (small width): FedAvg and
# PLayer-FL (sensitivity-chosen split over the four blocks embedding, attention, feedforward, head)
# give identical results files at 1, 2 and 4 ranks, and the global model learns; FedBABU and FedLP
# run on it; model.loss = focal_playerfl gives identical results at 1 and 2 ranks; a PLayer-FL run
# stopped by SIGTERM and resumed at 3 ranks equals the uninterrupted one;
# on LEAF Sent140-format JSON (left-padded tweets whose label is set by one sentiment word) it
# learns the rule; bad model.focal_alpha and a short model.max_len are
# refused with exit 2 and a line naming them.
TEST_NAME=test_transformer
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir

SEQ=(--dataset sequence --partition.scheme natural --clients 6 --data.users 6 --data.samples_per_user 200
  --data.seq_length 12 --data.vocab_size 40 --model transformer_playerfl --model.embed_dim 16 --train.batch 16
  --train.lr 0.3 --eval.batch 64 --seed 7)

run() {  # LOG NP ARGS...: sets RC
  local logf=$1 np=$2
  shift 2
  RC=0
  "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "$@" >"$logf" 2>&1 || RC=$?
}

for alg in fedavg playerfl; do
  for np in 1 2 4; do
    run "$WORK/${alg}_$np.log" "$np" "${SEQ[@]}" --algorithm "$alg" --rounds 20 --output "$WORK/${alg}_$np.h5"
    [ "$RC" = 0 ] || fail "$alg at $np ranks exited $RC: $(tail -3 "$WORK/${alg}_$np.log")"
  done
  for np in 2 4; do
    h5_same "$WORK/${alg}_1.h5" "$WORK/${alg}_$np.h5" && log "$alg: 1 and $np ranks identical" ||
      fail "$alg: 1 and $np ranks differ (above)"
  done
done

"$PY" - "$WORK/fedavg_1.h5" "$WORK/playerfl_1.h5" <<'PYEOF' || fail "the transformer did not learn, or PLayer-FL's records are wrong"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    loss = f["rounds/global_loss"][:]
    acc = float(f["summary/global_accuracy"][()])
    print("  fedavg: global loss %.3f -> %.3f, accuracy %.3f (chance 0.25)" % (loss[0], loss[-1], acc))
    assert loss[-1] < loss[0] and acc > 0.6
with h5py.File(sys.argv[2], "r") as f:
    p = int(f["playerfl/split_layer"][()])
    name = f["playerfl/split_layer"].attrs["name"]
    name = name.decode() if isinstance(name, bytes) else name
    curve = f["playerfl/curve"][:]
    print("  playerfl: split after block %d (%s), curve %s" % (p, name, np.round(curve, 3)))
    assert curve.shape == (4,) and np.isfinite(curve).all()
    assert 1 <= p <= 4 and name == ["embedding", "attention", "feedforward", "head"][p - 1]
PYEOF

for alg in fedbabu fedlp; do
  run "$WORK/$alg.log" 2 "${SEQ[@]}" --algorithm "$alg" --rounds 3 --output "$WORK/$alg.h5"
  [ "$RC" = 0 ] && h5_complete "$WORK/$alg.h5" && log "$alg runs on the transformer" ||
    fail "$alg exited $RC: $(tail -3 "$WORK/$alg.log")"
done

# The PLayer-FL authors' focal loss with per-class alpha: the same results at 1 and 2 ranks.
for np in 1 2; do
  run "$WORK/fpl_$np.log" "$np" "${SEQ[@]}" --rounds 3 --model.loss focal_playerfl --model.focal_gamma 3 \
    --model.focal_alpha 0.1,0.2,0.3,0.4 --output "$WORK/fpl_$np.h5"
  [ "$RC" = 0 ] || fail "focal_playerfl at $np ranks exited $RC: $(tail -3 "$WORK/fpl_$np.log")"
done
h5_same "$WORK/fpl_1.h5" "$WORK/fpl_2.h5" && log "focal_playerfl: 1 and 2 ranks identical" ||
  fail "focal_playerfl: 1 and 2 ranks differ (above)"

# Kill and resume: PLayer-FL (its split is chosen in round 0 and must survive the checkpoint).
run "$WORK/ref.log" 2 "${SEQ[@]}" --algorithm playerfl --rounds 10 --output "$WORK/ref.h5"
FEDSILO_FAULT=slow:rank=0,ms=300 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${SEQ[@]}" --algorithm playerfl --rounds 10 \
  --output "$WORK/cut.h5" >"$WORK/cut.log" 2>&1 &
PID=$!
if wait_for_line '^ +2 ' "$WORK/cut.log" 120 "$PID"; then signal_ranks TERM "$PID" || true; fi
RC=0
wait "$PID" || RC=$?
if [ "$RC" = 75 ] && [ -f "$WORK/cut.h5.ckpt" ]; then
  run "$WORK/resume.log" 3 "${SEQ[@]}" --algorithm playerfl --rounds 10 --output "$WORK/cut.h5" --resume
  [ "$RC" = 0 ] && h5_same "$WORK/ref.h5" "$WORK/cut.h5" && log "playerfl: resumed run identical" ||
    fail "playerfl: resumed run exited $RC or differs: $(tail -3 "$WORK/resume.log")"
else
  fail "interrupted run: exit $RC (expected 75 with a checkpoint): $(tail -3 "$WORK/cut.log")"
fi

# LEAF Sent140 format: {"users", "num_samples", "user_data": {u: {"x": [[id, date, query, user, text]], "y": [0|1]}}}.
"$PY" - "$WORK/leaf" <<'PYEOF'
import json, os, random, sys
root = sys.argv[1]
rng = random.Random(3)
good, bad, filler = ["great", "love", "happy", "fun"], ["sad", "hate", "awful", "tired"], ["the", "a", "day", "is", "so", "my", "today"]
for split, n in (("train", 150), ("test", 30)):
    os.makedirs(os.path.join(root, split))
    data = {"users": [], "num_samples": [], "user_data": {}}
    for u in range(4):
        xs, ys = [], []
        for i in range(n):
            y = rng.randrange(2)
            words = [rng.choice(filler) for _ in range(rng.randrange(2, 9))]
            words.insert(rng.randrange(len(words) + 1), rng.choice(good if y else bad))
            xs.append([str(i), "Mon Apr 06 2009", "NO_QUERY", "user%d" % u, " ".join(words)])
            ys.append(y)
        name = "user%d" % u
        data["users"].append(name)
        data["num_samples"].append(n)
        data["user_data"][name] = {"x": xs, "y": ys}
    with open(os.path.join(root, split, "all_data.json"), "w") as f:
        json.dump(data, f)
PYEOF
run "$WORK/leaf.log" 2 --dataset leaf --data.dir "$WORK/leaf" --data.seq_length 12 --partition.scheme natural --clients 4 \
  --model transformer_playerfl --model.embed_dim 16 --model.max_len 16 --algorithm fedavg --rounds 10 --train.batch 8 \
  --train.lr 0.3 --seed 2 --output "$WORK/leaf.h5"
if [ "$RC" = 0 ]; then
  "$PY" - "$WORK/leaf.h5" <<'PYEOF' && log "LEAF Sent140 JSON: learns" || fail "LEAF Sent140 JSON: did not learn"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    loss = f["rounds/global_loss"][:]
    acc = float(f["summary/global_accuracy"][()])
    print("  sent140-format: global loss %.3f -> %.3f, accuracy %.3f (chance 0.5)" % (loss[0], loss[-1], acc))
    assert loss[-1] < loss[0] and acc > 0.9
PYEOF
else
  fail "LEAF Sent140 JSON run exited $RC: $(tail -3 "$WORK/leaf.log")"
fi

# refused(WHAT PATTERN ARGS...): exit 2 and a line matching PATTERN.
refused() {
  local what=$1 pattern=$2
  shift 2
  run "$WORK/bad.log" 1 "${SEQ[@]}" --algorithm fedavg --rounds 1 --output "$WORK/bad.h5" "$@"
  if [ "$RC" = 2 ] && grep -qE "$pattern" "$WORK/bad.log" && [ ! -e "$WORK/bad.h5" ]; then
    log "refused: $what"
  else
    fail "$what: exit $RC, expected 2 with '$pattern': $(tail -2 "$WORK/bad.log")"
  fi
}
refused "negative focal_alpha" 'model.focal_alpha = 1,-2,1,1: weight -2' --model.loss focal --model.focal_alpha 1,-2,1,1
refused "focal_alpha of the wrong length" 'model.focal_alpha: 3 class weights, but the dataset has 4 classes' \
  --model.loss focal --model.focal_alpha 1,2,3
refused "focal_alpha without focal loss" 'model.focal_alpha = 1,1,1,1: applies with model.loss = focal or focal_playerfl only' \
  --model.focal_alpha 1,1,1,1
refused "focal_playerfl alpha above 1" 'model.focal_alpha = 0.5,1.5,1,1: weight 1.5 exceeds 1' \
  --model.loss focal_playerfl --model.focal_alpha 0.5,1.5,1,1
refused "a position table shorter than the sequences" 'model.max_len = 8' --model.max_len 8
finish
