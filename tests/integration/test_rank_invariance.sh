#!/usr/bin/env bash
# label: integration
# timeout: 600
# cost: 40
# The same config at 1, 2 and 4 ranks gives identical per-client accuracies, identical weights and
# a global model within 1e-5 (in fact bit-identical: every reduction is exact); so does the other
# client placement (fl.placement = clients instead of samples), which must put clients elsewhere.
source "$(dirname "$0")/lib/common.sh"
for alg in fedavg local; do
  for np in 1 2 4; do
    "$MPIEXEC" -n $np "$FEDSILO_EXE" "${SMALL[@]}" --clients 6 --rounds 3 --fl.clients_per_round 4 \
      --algorithm $alg --output "$TMP/${alg}_np$np.h5" >"$TMP/log" 2>&1 || { cat "$TMP/log"; fail "$alg np=$np run"; }
  done
  "$MPIEXEC" -n 4 "$FEDSILO_EXE" "${SMALL[@]}" --clients 6 --rounds 3 --fl.clients_per_round 4 \
    --algorithm $alg --fl.placement clients --output "$TMP/${alg}_np4c.h5" >"$TMP/log" 2>&1 || { cat "$TMP/log"; fail "$alg np=4 placement=clients run"; }
  "$PY" - "$TMP/${alg}_np4.h5" "$TMP/${alg}_np4c.h5" <<'PYEOF' || fail "$alg: the two placements put every client on the same rank (the check below proves nothing)"
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["clients/rank"][:] for p in sys.argv[1:])
print("ranks by samples:", list(a), "by clients:", list(b))
sys.exit(0 if not np.array_equal(a, b) else 1)
PYEOF
  "$PY" - "$TMP/${alg}_np1.h5" "$TMP/${alg}_np2.h5" "$TMP/${alg}_np4.h5" "$TMP/${alg}_np4c.h5" <<'PYEOF' && pass "$alg: np 1, 2, 4 and the count placement identical" || fail "$alg: results differ across rank counts or placements"
import sys, h5py, numpy as np
fs = [h5py.File(p, "r") for p in sys.argv[1:]]
ref = fs[0]
for f in fs[1:]:
    for d in ("rounds/client_accuracy", "rounds/client_f1", "rounds/weight", "rounds/participated",
              "rounds/global_accuracy", "summary/client_accuracy", "sensitivity/round0"):
        a, b = ref[d][:], f[d][:]
        if not np.array_equal(a, b, equal_nan=True):
            print("differs:", d, f.attrs["num_ranks"]); sys.exit(1)
    diff = np.abs(ref["model/global"][:] - f["model/global"][:]).max()
    if diff > 1e-5:
        print("global model differs by", diff); sys.exit(1)
    print("np", int(f.attrs["num_ranks"]), "max |global diff| =", diff)
PYEOF
done
# Clients of uneven sizes (the synthetic dataset's power-law users): the placement by samples then gives
# ranks clients that are not adjacent, and every gather must still put the values in client order.
for np in 1 2 4; do
  "$MPIEXEC" -n $np "$FEDSILO_EXE" --dataset synthetic --clients 8 --rounds 3 --model.hidden 16 --fl.clients_per_round 6 \
    --eval.select best_val --output "$TMP/uneven_np$np.h5" >"$TMP/log" 2>&1 || { cat "$TMP/log"; fail "uneven clients np=$np run"; }
done
"$PY" - "$TMP/uneven_np1.h5" "$TMP/uneven_np2.h5" "$TMP/uneven_np4.h5" <<'PYEOF' && pass "uneven clients: np 1, 2, 4 identical, with placements that are not contiguous ranges" || fail "uneven clients: results differ across rank counts, or the placements were contiguous"
import sys, h5py, numpy as np
fs = [h5py.File(p, "r") for p in sys.argv[1:]]
ref = fs[0]
for f in fs[1:]:
    r = f["clients/rank"][:]
    print("np", int(f.attrs["num_ranks"]), "clients/rank:", list(r), "num_train:", list(f["clients/num_train"][:]))
    if np.all(np.diff(r) >= 0):
        print("contiguous placement: the check proves nothing"); sys.exit(1)
    for d in ("rounds/client_accuracy", "rounds/client_loss", "rounds/weight", "rounds/participated",
              "rounds/global_accuracy", "rounds/client_val_accuracy", "summary/client_accuracy",
              "summary/selected_round", "summary/mean", "summary/mean_f1", "summary/efficiency", "summary/jain",
              "sensitivity/round0", "model/global"):
        if not np.array_equal(ref[d][()], f[d][()], equal_nan=True):
            print("differs:", d); sys.exit(1)
PYEOF
finish
