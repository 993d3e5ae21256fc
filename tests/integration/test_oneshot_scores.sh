#!/usr/bin/env bash
# label: integration
# timeout: 600
# One-shot client scores are those of the model the algorithm hands a client: the ensemble's vote
# (not each client's own local model) and neuron-wise GEMS' wider model. /summary/client_accuracy,
# the last /rounds row and the /summary figures must agree with /gems/client_accuracy (the scores the
# algorithm computes itself), identically at 1 and 2 ranks.
source "$(dirname "$0")/lib/common.sh"
TINY=(--clients 4 --partition.samples_per_client 150 --train.batch 16 --eval.batch 100 --gems.local_epochs 2
      --gems.samples 20 --gems.public_samples 50 --gems.finetune_sizes 0,50)
run_case() {  # name ranks args...
  local name=$1 ranks=$2
  shift 2
  if ! "$MPIEXEC" -n "$ranks" "$FEDSILO_EXE" "${TINY[@]}" "$@" --output "$TMP/$name.h5" >"$TMP/$name.log" 2>&1; then
    tail -5 "$TMP/$name.log" >&2
    fail "$name: run failed"
    return 1
  fi
}
check_scores() {  # name
  if "$PY" - "$TMP/$1.h5" <<'PY'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
own = f["gems/client_accuracy"][()]
summary = f["summary/client_accuracy"][()]
assert np.isfinite(own).all(), own
np.testing.assert_array_equal(summary, own)
np.testing.assert_array_equal(f["rounds/client_accuracy"][-1], own)
assert f["summary/mean"][()] == np.mean(own), (f["summary/mean"][()], np.mean(own))
algorithm = f.attrs["algorithm"]
algorithm = algorithm.decode() if isinstance(algorithm, bytes) else str(algorithm)
if algorithm == "ensemble":  # a vote has no loss, and its F1 is the vote's
    assert np.isnan(f["summary/client_loss"][()]).all()
    assert np.isfinite(f["summary/client_f1"][()]).all()
PY
  then pass "$1: /summary and the last /rounds row hold the algorithm's own client scores"; else fail "$1: client scores"; fi
}
same_results() {  # a b
  if "$PY" - "$TMP/$1.h5" "$TMP/$2.h5" <<'PY'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
for k in ("summary/client_accuracy", "summary/client_f1", "gems/client_accuracy", "rounds/client_accuracy"):
    np.testing.assert_array_equal(a[k][()], b[k][()], err_msg=k)
PY
  then pass "$1 = $2 (rank invariance)"; else fail "$1 differs from $2"; fi
}
for ranks in 1 2; do
  run_case "ensemble_np$ranks" "$ranks" --algorithm ensemble --model logreg --rounds 1 && check_scores "ensemble_np$ranks"
  run_case "gems_neuron_np$ranks" "$ranks" --algorithm gems --model mlp --model.hidden 16 --rounds 2 \
    --gems.clusters 8 && check_scores "gems_neuron_np$ranks"
done
same_results ensemble_np1 ensemble_np2
same_results gems_neuron_np1 gems_neuron_np2
finish
