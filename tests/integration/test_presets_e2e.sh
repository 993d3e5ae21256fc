#!/usr/bin/env bash
# label: integration
# timeout: 900
# cost: 60
# FedAvg end to end for every model preset on a dataset that fits it, at 1 and 2 ranks (small sizes):
# each run completes, writes a results file, learns (the global test loss falls from round 0 to the
# last round; the fast models also beat chance by 10 points), and 1 and 2 ranks agree exactly.
# The global model is evaluated at round 0 and the last round only (eval.every), and the CNNs on the first
# 1,000 FashionMNIST test images (lib/fmnist_subset.py): on all 10,000 their evaluations took most of the time.
source "$(dirname "$0")/lib/common.sh"
run_case() {  # name chance args...   (chance < 0: only require the loss to fall)
  local name=$1 chance=$2
  shift 2
  for np in 1 2; do
    if ! "$MPIEXEC" -n $np "$FEDSILO_EXE" --algorithm fedavg --seed 1 --output "$TMP/${name}_np$np.h5" "$@" >"$TMP/$name.log" 2>&1; then
      tail -5 "$TMP/$name.log" >&2
      fail "$name at $np ranks"
      return
    fi
  done
  if "$PY" - "$TMP/${name}_np1.h5" "$TMP/${name}_np2.h5" "$chance" <<'PYEOF'; then pass "$name learns and is rank-invariant"; else fail "$name"; fi
import sys, h5py, numpy as np
a, b, chance = h5py.File(sys.argv[1]), h5py.File(sys.argv[2]), float(sys.argv[3])
acc = float(a["summary/global_accuracy"][()])
loss = a["rounds/global_loss"][:]
print("  global accuracy %.3f (chance %.2f), global loss %.3f -> %.3f" % (acc, abs(chance), loss[0], loss[-1]))
assert loss[-1] < loss[0], "the global test loss did not fall"
assert chance < 0 or acc > chance + 0.1, "did not beat chance"
assert np.array_equal(a["summary/client_accuracy"][:], b["summary/client_accuracy"][:], equal_nan=True), "1 vs 2 ranks"
assert np.abs(a["model/global"][:] - b["model/global"][:]).max() <= 1e-5, "global model differs"
PYEOF
}
FM_DIR=$("$FEDSILO_EXE" --dataset fashion_mnist --dry-run --output "$TMP/dir.h5" | sed -n 's/^dir = //p')
"$PY" "$FEDSILO_SOURCE_DIR/tests/integration/lib/fmnist_subset.py" "$FM_DIR" "$TMP/fmnist_1k" 1000 ||
  { fail "could not write the 1,000-image FashionMNIST test set"; finish; }
FM=(--dataset fashion_mnist --clients 4 --partition.samples_per_client 150 --rounds 2 --train.batch 16 --eval.batch 100 --eval.every 1000)
run_case mlp 0.1 "${FM[@]}" --model mlp --model.hidden 32
run_case logreg 0.1 "${FM[@]}" --model logreg --train.lr 0.1
run_case svm 0.1 "${FM[@]}" --model svm --train.lr 0.01
run_case cnn_mcmahan 0.1 "${FM[@]}" --model cnn_mcmahan --data.dir "$TMP/fmnist_1k" --partition.samples_per_client 60 --train.lr 0.05
run_case cnn_playerfl -0.1 "${FM[@]}" --model cnn_playerfl --data.dir "$TMP/fmnist_1k" --partition.samples_per_client 40 --rounds 3 --train.lr 0.05 --train.momentum 0.9
run_case lstm 0.25 --dataset sequence --partition.scheme natural --clients 10 --data.users 10 --data.samples_per_user 300 \
  --model lstm --rounds 15 --train.lr 0.5 --eval.batch 200
run_case logreg_synthetic 0.1 --dataset synthetic --partition.scheme natural --clients 10 --data.users 10 --model logreg --rounds 3 --train.lr 0.05 --eval.batch 100
finish
