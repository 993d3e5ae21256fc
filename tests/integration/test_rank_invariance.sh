#!/usr/bin/env bash
# label: integration
# timeout: 600
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
finish
