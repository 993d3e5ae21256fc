#!/usr/bin/env bash
# label: integration
# timeout: 300
# The results file: shapes and attributes of docs/results.md, read back by h5dump and by h5py.
source "$(dirname "$0")/lib/common.sh"
out=$TMP/r.h5
"$MPIEXEC" -n 2 "$FEDSILO_EXE" "${SMALL[@]}" --rounds 3 --output.client_models true --output "$out" >"$TMP/log" 2>&1 \
  || { cat "$TMP/log"; fail "run failed"; finish; }
[ -f "$out" ] && pass "results file exists" || fail "no results file"
[ ! -e "$out.partial" ] && pass "no .partial left" || fail ".partial left behind"
h5dump -A "$out" >"$TMP/attrs" 2>&1 || fail "h5dump -A failed"
for a in config algorithm dataset model seed num_clients num_ranks version format kernels; do
  grep -q "ATTRIBUTE \"$a\"" "$TMP/attrs" && pass "h5dump shows attribute $a" || fail "attribute $a missing in h5dump"
done
h5dump -H -d /rounds/client_accuracy "$out" | grep -q "( 3, 4 ) / ( H5S_UNLIMITED, 4 )" \
  && pass "h5dump: /rounds/client_accuracy is 3 x 4, extendible" || fail "h5dump shape of /rounds/client_accuracy"
"$PY" - "$out" <<'PYEOF' || fail "h5py checks"
import sys, math, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
K, T = 4, 3
def check(cond, msg):
    if not cond:
        print("h5py check failed:", msg); sys.exit(1)
a = f.attrs
check(a["algorithm"].decode() == "fedavg" and a["dataset"].decode() == "fashion_mnist", "string attributes")
check(int(a["num_clients"]) == K and int(a["num_ranks"]) == 2 and int(a["seed"]) == 0, "integer attributes")
check("[train]" in a["config"].decode() and "clients = 4" in a["config"].decode(), "resolved config text")
check("\ndir = /usr/share/datasets/fashion-mnist\n" in a["config"].decode(), "config names the default data.dir read")
check(a["format"].decode().startswith("fedsilo-results"), "format")
check(a["kernels"].decode() in ("avx512", "avx2", "generic"), "kernels names a kernel set")
for n in ("rank", "num_train", "num_val", "num_test"):
    check(f["clients/" + n].shape == (K,), "/clients/" + n)
check(list(f["clients/rank"][:]) == [0, 0, 1, 1], "block placement of 4 clients on 2 ranks")
check(f["clients/label_counts"].shape == (K, 10), "label_counts shape")
check((f["clients/label_counts"][:].sum(axis=1) == f["clients/num_train"][:]).all(), "label counts sum to num_train")
check(int(f["clients/num_train"][:].sum() + f["clients/num_val"][:].sum() + f["clients/num_test"][:].sum()) == 400, "100 samples per client")
for n in ("global_accuracy", "global_loss", "seconds", "train_seconds", "round"):
    check(f["rounds/" + n].shape == (T,), "/rounds/" + n)
check(list(f["rounds/round"][:]) == [0, 1, 2] and f["rounds/round"].dtype == np.int64, "round indices (int64)")
for n in ("client_accuracy", "client_f1", "client_loss", "client_val_accuracy", "client_val_loss", "weight",
          "participated"):
    check(f["rounds/" + n].shape == (T, K), "/rounds/" + n)
val = f["rounds/client_val_accuracy"][:]
check(((val >= 0) & (val <= 1)).all(), "validation accuracies in [0,1] every (evaluated) round")
acc = f["rounds/client_accuracy"][:]
check(((acc >= 0) & (acc <= 1)).all(), "accuracies in [0,1]")
w = f["rounds/weight"][:]
check(np.allclose(w.sum(axis=1), 1.0), "weights sum to 1 each round")
ntr = f["clients/num_train"][:]
check(np.allclose(w[0], ntr / ntr.sum()), "FedAvg weights are n_k / sum n")
check((f["rounds/participated"][:] == 1).all(), "all clients participated")
s = f["summary"]
check(s["client_accuracy"].shape == (K,), "summary client accuracy")
final = f["summary/client_accuracy"][:]
check(abs(float(s["mean"][()]) - final.mean()) < 1e-12, "summary mean")
check(s["selected_round"].dtype == np.int64 and list(s["selected_round"][:]) == [T - 1] * K,
      "eval.select = final: every client's summary is the last round's")
check(np.array_equal(final, acc[T - 1]), "the summary is the last round's evaluation")
check(np.array_equal(s["client_val_accuracy"][:], val[T - 1]), "the summary's validation figures")
check(abs(float(s["variance"][()]) - final.var()) < 1e-12, "summary variance (1/K)")
check(abs(float(s["jain"][()]) - final.sum() ** 2 / (K * (final ** 2).sum())) < 1e-12, "summary Jain index")
worst = np.sort(final)[: math.ceil(K / 10)].mean()
check(abs(float(s["worst10"][()]) - worst) < 1e-12, "summary worst10")
P = 784 * 16 + 16 + 16 * 10 + 10
check(f["model/global"].shape == (P,) and f["model/global"].dtype == np.float32, "global model")
check([x.decode() for x in f["model/layers/name"][:]] == ["fc1", "fc2"], "layer names")
check(list(f["model/layers/offset"][:]) == [0, 784 * 16 + 16], "layer offsets")
check(f["model/clients"].shape == (K, P), "client models")
check(np.array_equal(f["model/clients"][0], f["model/global"][:]), "fedavg clients use the global model")
check(f["sensitivity/round0"].shape == (K, 2) and np.isfinite(f["sensitivity/round0"][:]).all(), "sensitivity round0")
check(f["sensitivity/final"].shape == (K, 2), "sensitivity final")
print("h5py: all checks passed")
PYEOF

# docs/results.md and the file agree on every documented type: each table row's datasets (or root
# attributes) with their type (no type: float64; int64, float32, string as written).
"$PY" - "$out" "$FEDSILO_SOURCE_DIR/docs/results.md" <<'PYEOF' || fail "docs/results.md types differ from the file"
import re, sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
group, checked, bad = None, 0, []
for line in open(sys.argv[2]):
    m = re.match(r"## (?:`(/[a-z_]+/)`|(Root attributes))", line)
    if m:
        group = m.group(1) or "@"
        continue
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if group is None or len(cells) < 3 or not cells[0].startswith("`"):
        continue
    t = re.match(r"(int64|int32|float32|float64|string)\b", cells[1])
    want = t.group(1) if t else "float64"
    for name in re.findall(r"`([^`]+)`", cells[0]):
        if group == "@":
            obj = f.attrs[name] if name in f.attrs else None
            got = None if obj is None else ("string" if isinstance(obj, bytes) else str(np.asarray(obj).dtype))
        else:
            path = group + name
            if path not in f:
                continue  # e.g. /data/vocabulary: only for token datasets
            d = f[path]
            text = h5py.check_string_dtype(d.dtype)
            # String datasets are variable-length (docs/results.md); a fixed-length one would not match.
            got = str(d.dtype) if text is None else ("string" if text.length is None else "fixed-length string")
        checked += 1
        if got != want:
            bad.append(f"{group}{name}: docs say {want}, file has {got}")
for b in bad:
    print("   ", b)
if checked < 40:
    print("only", checked, "documented names found in the file"); sys.exit(1)
print("docs/results.md: checked the types of", checked, "documented names against the file")
sys.exit(1 if bad else 0)
PYEOF

# eval.every > 1: still one row per round; the rounds not evaluated (1 and 3 of 0..4; the last round
# is always evaluated) have NaN evaluation entries, and every row has its weights, participation and
# times. Rank 0 prints one line per round, with "-" for the accuracies of a round not evaluated.
ev=$TMP/every.h5
"$MPIEXEC" -n 2 "$FEDSILO_EXE" "${SMALL[@]}" --rounds 5 --eval.every 2 --output "$ev" >"$TMP/every.log" 2>&1 \
  || { cat "$TMP/every.log"; fail "eval.every run failed"; finish; }
for t in 0 2 4; do
  grep -qE "^ +$t +0\.[0-9]{4} +0\.[0-9]{4} +0\.[0-9]{4} +[0-9.]+ +[0-9.]+ +[0-9]+:[0-9]{2}:[0-9]{2}$" "$TMP/every.log" \
    && pass "round line $t shows the accuracies" || fail "round line $t: $(grep -E "^ +$t " "$TMP/every.log")"
done
for t in 1 3; do
  grep -qE "^ +$t +- +- +- +[0-9.]+ +[0-9.]+ +[0-9]+:[0-9]{2}:[0-9]{2}$" "$TMP/every.log" \
    && pass "round line $t (not evaluated) shows - placeholders" || fail "round line $t: $(grep -E "^ +$t " "$TMP/every.log")"
done
[ "$(grep -cE '^ +[0-9]+ ' "$TMP/every.log")" = 5 ] && pass "one round line per round" || fail "not 5 round lines"
h5dump -H -d /rounds/weight "$ev" | grep -q "( 5, 4 ) / ( H5S_UNLIMITED, 4 )" \
  && pass "h5dump: /rounds/weight is 5 x 4 with eval.every 2" || fail "h5dump shape of /rounds/weight (eval.every 2)"
"$PY" - "$ev" <<'PYEOF' || fail "h5py checks (eval.every 2)"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
K, T = 4, 5
evaluated, skipped = [0, 2, 4], [1, 3]
def check(cond, msg):
    if not cond:
        print("h5py check failed:", msg); sys.exit(1)
r = f["rounds"]
check(list(r["round"][:]) == list(range(T)), "one row per round: round = 0..4")
for n in ("global_accuracy", "global_loss", "seconds", "train_seconds"):
    check(r[n].shape == (T,), "/rounds/" + n + " has T rows")
for n in ("client_accuracy", "client_f1", "client_loss", "weight", "participated"):
    check(r[n].shape == (T, K), "/rounds/" + n + " has T rows")
for n in ("global_accuracy", "global_loss"):
    check(np.isnan(r[n][skipped]).all(), n + " NaN in the rounds not evaluated")
    check(np.isfinite(r[n][evaluated]).all(), n + " finite in the evaluated rounds")
for n in ("client_accuracy", "client_f1", "client_loss"):
    check(np.isnan(r[n][skipped]).all(), n + " NaN in the rounds not evaluated")
    check(np.isfinite(r[n][evaluated]).all(), n + " finite in the evaluated rounds")
w = r["weight"][:]
check(np.allclose(w.sum(axis=1), 1.0), "weights filled (sum to 1) in every round")
ntr = f["clients/num_train"][:]
check(np.allclose(w, ntr / ntr.sum()), "FedAvg weights n_k / sum n in every round")
check((r["participated"][:] == 1).all(), "participation filled in every round")
check((r["seconds"][:] > 0).all() and (r["train_seconds"][:] > 0).all(), "times filled in every round")
check(np.array_equal(f["summary/client_accuracy"][:], r["client_accuracy"][T - 1]), "the last round is evaluated")
print("h5py: eval.every checks passed")
PYEOF
# A one-layer model (L = 1): the per-layer tables stay [K, L], i.e. [K, 1], not [K].
one=$TMP/logreg.h5
"$MPIEXEC" -n 2 "$FEDSILO_EXE" "${SMALL[@]}" --model logreg --output "$one" >"$TMP/logreg.log" 2>&1 \
  || { cat "$TMP/logreg.log"; fail "logreg run failed"; finish; }
for d in round0 final; do
  h5dump -H -d /sensitivity/$d "$one" | grep -q "SIMPLE { ( 4, 1 ) / ( 4, 1 ) }" \
    && pass "h5dump: /sensitivity/$d is [K, L] = 4 x 1 for a one-layer model" || fail "shape of /sensitivity/$d (L = 1)"
done
finish
