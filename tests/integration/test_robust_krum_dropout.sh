#!/usr/bin/env bash
# label: integration
# timeout: 300
# cost: 5
# Krum after dropouts (docs/robustness.md, "Too few updates"): 6 clients, f = 1 (Krum needs 2f + 3 =
# 5 updates), fl.dropout 0.3. Rounds where fewer than 5 updates arrive keep the global model (its test
# loss is the previous round's), record no update as used (aggregator_selected all 0, the senders'
# aggregator_weight 0) and warn once naming the round and the count; the other rounds choose one silo.
# The run finishes, and is the same at 1 and 2 ranks.
source "$(dirname "$0")/lib/common.sh"
RUN=("${SMALL[@]}" --clients 6 --rounds 8 --seed 1 --fl.aggregator krum --fl.byzantine 1 --fl.dropout 0.3)
for np in 1 2; do
  "$MPIEXEC" -n $np "$FEDSILO_EXE" "${RUN[@]}" --output "$TMP/np$np.h5" >"$TMP/log$np" 2>&1 ||
    { cat "$TMP/log$np"; fail "krum with dropouts at $np ranks exited $?"; }
done
"$PY" - "$TMP" <<'PYEOF' && pass "rounds of too few updates keep the model, record nothing used, warn" || fail "too few updates"
import re, sys, h5py, numpy as np
tmp = sys.argv[1]
f = h5py.File(f"{tmp}/np1.h5", "r")
part = f["rounds/participated"][:]
sel, w = f["rounds/aggregator_selected"][:], f["rounds/aggregator_weight"][:]
loss = f["rounds/global_loss"][:]
arrived = part.sum(axis=1).astype(int)
short = [r for r in range(len(arrived)) if arrived[r] < 5]
if not short or len(short) == len(arrived) or not any(r > 0 for r in short):
    print("the seed no longer gives both kinds of round:", arrived); sys.exit(1)
warned = {int(m.group(1)): int(m.group(2)) for m in
          re.finditer(r"round (\d+): (\d+) updates? arrived, fl.aggregator = krum needs at least 5", open(f"{tmp}/log1").read())}
if warned != {r: int(arrived[r]) for r in short}:
    print("warnings", warned, "expected for", {r: int(arrived[r]) for r in short}); sys.exit(1)
for r in range(len(arrived)):
    if r in short:
        if sel[r].sum() != 0 or np.any(w[r][part[r] == 1] != 0) or (r > 0 and loss[r] != loss[r - 1]):
            print("round", r, "of", arrived[r], "updates: selected", sel[r], "weight", w[r], "loss", loss[r - 1:r + 1]); sys.exit(1)
    elif sel[r].sum() != 1 or part[r][sel[r] == 1][0] != 1 or (r > 0 and loss[r] == loss[r - 1]):
        print("round", r, "of", arrived[r], "updates: selected", sel[r], "loss", loss[r - 1:r + 1]); sys.exit(1)
g = h5py.File(f"{tmp}/np2.h5", "r")
for d in ("model/global", "rounds/aggregator_selected", "rounds/global_loss", "rounds/participated"):
    if not np.array_equal(f[d][()], g[d][()]):
        print(d, "differs at 2 ranks"); sys.exit(1)
PYEOF
finish
