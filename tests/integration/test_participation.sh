#!/usr/bin/env bash
# label: integration
# timeout: 600
# cost: 26
# Who takes part in a round, as recorded in /rounds/participated[T,K] and /rounds/weight[T,K]:
#  * client dropout (fl.dropout = 0.5): dropped clients send nothing (participated 0, weight 0), the
#    aggregation renormalises over the clients present (their weights sum to 1), and the drop pattern
#    is keyed by (seed, client, round), so it is the same at 1, 2 and 4 ranks;
#  * diverged updates with fl.skip_diverged = true: NaN on rank 1 from round 1 (FEDSILO_FAULT=nan,
#    test-only) and honestly from --train.lr 1e6: the run completes, the diverged clients are recorded
#    as participated = -1 with weight 0, the rest renormalise, the final model is finite;
#  * a dropped client's persistent personal state (local, ditto, pfedme, playerfl's local layers) is
#    not touched by the dropped round: FEDSILO_FAULT=inf (lr = +Inf from round 1 on rank 1, one step
#    per round) ends training with a finite loss and non-finite parameters; the clients' final models
#    must equal their models after round 0 (a 1-round run), and without fl.skip_diverged the NaN in
#    Local's never-reduced parameters is an error naming client and round.
TEST_NAME=test_participation
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir

run() {  # LOG NP ARGS...
  local logf=$1 np=$2
  shift 2
  RC=0
  "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "$@" >"$logf" 2>&1 || RC=$?
  if [ "$RC" != 0 ]; then
    fail "$(basename "$logf" .log): exit $RC"
    tail -5 "$logf" >&2
    return 1
  fi
}

# ---- dropout ---------------------------------------------------------------------------------------
DROP=(--dataset fashion_mnist --partition.samples_per_client 100 --clients 8 --rounds 5 --model.hidden 32
      --algorithm fedavg --seed 11 --fl.dropout 0.5)
for np in 1 2 4; do
  run "$WORK/drop$np.log" "$np" "${DROP[@]}" --output "$WORK/drop$np.h5" || true
done
run "$WORK/nodrop.log" 2 "${DROP[@]}" --fl.dropout 0 --output "$WORK/nodrop.h5" || true
if [ -f "$WORK/drop1.h5" ] && [ -f "$WORK/drop2.h5" ] && [ -f "$WORK/drop4.h5" ] && [ -f "$WORK/nodrop.h5" ]; then
  "$PY" - "$WORK" <<'PYEOF' || fail "dropout checks (above)"
import sys, h5py, numpy as np
w = sys.argv[1]
def load(n):
    with h5py.File(f"{w}/{n}.h5", "r") as f:
        return f["rounds/participated"][()], f["rounds/weight"][()], f["model/global"][()]
p1, w1, g1 = load("drop1")
bad = []
for n in ("drop2", "drop4"):
    p, wt, g = load(n)
    if not np.array_equal(p, p1): bad.append(f"{n}: participated differs from the 1-rank run")
    if not np.array_equal(g, g1): bad.append(f"{n}: final model differs from the 1-rank run")
zeros, ones = int((p1 == 0).sum()), int((p1 == 1).sum())
if zeros == 0 or ones == 0: bad.append(f"dropout 0.5 over {p1.size} client-rounds gave {zeros} drops and {ones} updates")
if not set(np.unique(p1)) <= {0.0, 1.0}: bad.append(f"participated holds {np.unique(p1)}")
for t in range(p1.shape[0]):
    if np.any(w1[t][p1[t] == 0] != 0): bad.append(f"round row {t}: a dropped client has a weight")
    s = w1[t][p1[t] == 1].sum()
    if (p1[t] == 1).any() and abs(s - 1) > 1e-9: bad.append(f"round row {t}: participants' weights sum to {s!r}, not 1")
p0, w0, _ = load("nodrop")
if not np.all(p0 == 1): bad.append("fl.dropout = 0: some client did not take part")
if np.abs(w0.sum(axis=1) - 1).max() > 1e-9: bad.append("fl.dropout = 0: weights do not sum to 1")
for m in bad: print("   ", m)
if not bad: print(f"    dropout: {zeros} drops, {ones} updates over {p1.shape[0]} rounds x {p1.shape[1]} clients; same at 1/2/4 ranks")
sys.exit(1 if bad else 0)
PYEOF
  log "dropout: checked"
fi

# ---- diverged updates dropped (fl.skip_diverged) ---------------------------------------------------
SKIP=("${TINY[@]}" --rounds 3 --algorithm fedavg --fl.skip_diverged true)
RC=0
FEDSILO_FAULT=nan:rank=1,round=1 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${SKIP[@]}" --output "$WORK/skip.h5" >"$WORK/skip.log" 2>&1 || RC=$?
if [ "$RC" != 0 ]; then
  fail "skip_diverged with NaN on rank 1: exit $RC"
  tail -5 "$WORK/skip.log" >&2
else
  grep -q 'update dropped (fl.skip_diverged)' "$WORK/skip.log" || fail "skip_diverged: no 'update dropped' warning"
  "$PY" - "$WORK/skip.h5" <<'PYEOF' || fail "skip_diverged (NaN on rank 1) checks (above)"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    p, w, g = f["rounds/participated"][()], f["rounds/weight"][()], f["model/global"][()]
bad = []
# 4 clients on 2 ranks: rank 1 hosts clients 2 and 3; from round 1 on they diverge.
exp = np.ones_like(p)
exp[1:, 2:] = -1
if not np.array_equal(p, exp): bad.append(f"participated = {p.tolist()}, expected {exp.tolist()}")
if np.any(w[p == -1] != 0): bad.append("a diverged client has a weight")
for t in range(p.shape[0]):
    s = w[t][p[t] == 1].sum()
    if abs(s - 1) > 1e-9: bad.append(f"row {t}: participants' weights sum to {s!r}")
if not np.all(np.isfinite(g)): bad.append("final global model is not finite")
for m in bad: print("   ", m)
sys.exit(1 if bad else 0)
PYEOF
  log "skip_diverged (NaN on rank 1 from round 1): checked"
fi

RC=0
"$MPIEXEC" -n 2 "$FEDSILO_EXE" "${SKIP[@]}" --train.lr 1e6 --output "$WORK/skiplr.h5" >"$WORK/skiplr.log" 2>&1 || RC=$?
if [ "$RC" != 0 ]; then
  fail "skip_diverged with --train.lr 1e6: exit $RC"
  tail -5 "$WORK/skiplr.log" >&2
else
  "$PY" - "$WORK/skiplr.h5" <<'PYEOF' || fail "skip_diverged (--train.lr 1e6) checks (above)"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    p, w, g = f["rounds/participated"][()], f["rounds/weight"][()], f["model/global"][()]
bad = []
if not (p == -1).any(): bad.append(f"no update recorded as diverged: {p.tolist()}")
if not set(np.unique(p)) <= {-1.0, 1.0}: bad.append(f"participated holds {np.unique(p)}")
if np.any(w[p == -1] != 0): bad.append("a diverged client has a weight")
if not np.all(np.isfinite(g)): bad.append("final global model is not finite")
for m in bad: print("   ", m)
sys.exit(1 if bad else 0)
PYEOF
  log "skip_diverged (--train.lr 1e6): checked"
fi
# ---- a dropped client's personal state is left as it was before the round ----------------------------
# 4 clients on 2 ranks (rank 1: clients 2 and 3), 80 training samples each, batch 100: one SGD step per
# round, so with lr = +Inf training ends with Inf/NaN parameters and a finite loss.
PERS=("${TINY[@]}" --train.batch 100 --fl.skip_diverged true --output.client_models true)
for alg in local ditto pfedme playerfl; do
  extra=()
  [ "$alg" = playerfl ] && extra=(--playerfl.split 1) # fc1 federated, fc2 local (never reduced)
  A=("${PERS[@]}" --algorithm "$alg" "${extra[@]}")
  RC=0
  FEDSILO_FAULT=inf:rank=1,round=1 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${A[@]}" --rounds 3 --output "$WORK/pers-$alg.h5" \
    >"$WORK/pers-$alg.log" 2>&1 || RC=$?
  run "$WORK/pers1-$alg.log" 2 "${A[@]}" --rounds 1 --output "$WORK/pers1-$alg.h5" || continue
  if [ "$RC" != 0 ]; then
    fail "$alg: skip_diverged with lr = +Inf on rank 1: exit $RC"
    tail -5 "$WORK/pers-$alg.log" >&2
    continue
  fi
  if "$PY" - "$WORK/pers-$alg.h5" "$WORK/pers1-$alg.h5" "$alg" <<'PYEOF'; then
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f, h5py.File(sys.argv[2], "r") as f1:
    p, models, after0 = f["rounds/participated"][()], f["model/clients"][()], f1["model/clients"][()]
    loss = f["summary/client_loss"][()]
    offsets = list(f["model/layers/offset"][()])
alg, bad = sys.argv[3], []
exp = np.ones_like(p)
exp[1:, 2:] = -1  # rank 1's clients diverge from round 1 on and are dropped
if not np.array_equal(p, exp): bad.append(f"participated = {p.tolist()}, expected {exp.tolist()}")
# What each client keeps: the whole personal model, or PLayer-FL's local layers (fc2 on).
kept = slice(offsets[1], None) if alg == "playerfl" else slice(None)
for k in (2, 3):
    if not np.all(np.isfinite(models[k])): bad.append(f"client {k}: final model is not finite")
    if not np.array_equal(models[k][kept], after0[k][kept]):
        bad.append(f"client {k}: personal state changed by the dropped rounds (differs from its state after round 0)")
if not np.all(np.isfinite(loss)): bad.append(f"final client losses not finite: {loss.tolist()}")
for m in bad: print("   ", m)
sys.exit(1 if bad else 0)
PYEOF
    log "$alg: dropped rounds left the diverged clients' personal state as after round 0"
  else
    fail "$alg: a dropped client's personal state (above)"
  fi
done
# Without fl.skip_diverged the same divergence is an error naming client and round, also for Local,
# whose parameters are never reduced (only the personal-state check sees them).
RC=0
FEDSILO_FAULT=inf:rank=1,round=1 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${TINY[@]}" --train.batch 100 --algorithm local \
  --rounds 3 --output "$WORK/pers-noskip.h5" >"$WORK/pers-noskip.log" 2>&1 || RC=$?
[ "$RC" = 1 ] || fail "local, lr = +Inf without skip_diverged: exit $RC, expected 1"
grep -qE "fedsilo: error: client 2 round 1: personal state of layer fc1 contains" "$WORK/pers-noskip.log" \
  && log "local without skip_diverged: error names client 2, round 1 and the personal state" \
  || fail "local without skip_diverged: no error naming client 2 round 1: $(grep -m1 error "$WORK/pers-noskip.log")"
finish
