#!/usr/bin/env bash
# label: integration
# timeout: 600
# cost: 37
# Byzantine silos and robust aggregation. Eight (attack, aggregator) pairs covering both omniscient
# attacks, a drawn malicious set, Krum's and Multi-Krum's selection, centered clipping's state across
# rounds and both column-block paths (the coordinate-wise trimmed mean and median; Krum, Multi-Krum,
# geomed, centered clipping and norm clipping with their partial sums exchanged) run at 1, 2 and 4
# ranks (alie_geomed, scale_normclip and multikrum at 1 and 4; test_mpi_robust_columns covers every
# block path at 1, 2 and 4) and give identical results files (every /rounds, /clients, /summary,
# /sensitivity dataset but the timings, and the global model); the other pairs run at 1 rank for the
# records: the malicious silos are the ones asked for (or, drawn, as many as asked), Krum records one chosen silo per
# round among those that sent and never the sign-flipped ones, Multi-Krum m, norm clipping its factors,
# and the attacks change the model against the honest run.
source "$(dirname "$0")/lib/common.sh"
COMMON=("${SMALL[@]}" --clients 8 --rounds 3 --fl.clients_per_round 7)
cases=(  # name|ranks|options
  "honest|1|--fl.aggregator mean"
  "alie_trimmed|1 2 4|--attack.kind alie --attack.client_ids 1,6 --fl.aggregator trimmed_mean --fl.trim_fraction 0.25"
  "signflip_krum|1 2 4|--attack.kind sign_flip --attack.clients 2 --attack.scale 4 --fl.aggregator krum --fl.byzantine 2"
  "gaussian_geomed|1|--attack.kind gaussian --attack.clients 2 --fl.aggregator geomed"
  "alie_geomed|1 4|--attack.kind alie --attack.clients 2 --fl.aggregator geomed"
  "ipm_cclip|1 2 4|--attack.kind ipm --attack.client_ids 0,3 --attack.epsilon 0.5 --fl.aggregator centered_clip --fl.clip_tau 0.5 --fl.clip_iterations 2 --attack.start_round 1"
  "labelflip_median|1|--attack.kind label_flip --attack.clients 3 --fl.aggregator median"
  "signflip_median|1 2 4|--attack.kind sign_flip --attack.clients 2 --fl.aggregator median"
  "scale_normclip|1 4|--attack.kind scale --attack.clients 1 --fl.aggregator norm_clip --fl.clip_norm 0.5"
  "signflip_mean|1|--attack.kind sign_flip --attack.client_ids 2"
  "multikrum|1 4|--attack.kind ipm --attack.client_ids 5 --fl.aggregator multi_krum --fl.byzantine 1 --fl.krum_m 3"
)
for c in "${cases[@]}"; do
  IFS='|' read -r name ranks options <<<"$c"
  read -r -a extra <<<"$options"
  for np in $ranks; do
    "$MPIEXEC" -n $np "$FEDSILO_EXE" "${COMMON[@]}" "${extra[@]}" --output "$TMP/${name}_np$np.h5" >"$TMP/log" 2>&1 ||
      { cat "$TMP/log"; fail "$name np=$np run"; }
  done
  [ "$ranks" = 1 ] && continue
  files=()
  for np in $ranks; do files+=("$TMP/${name}_np$np.h5"); done
  "$PY" - "$name" "${files[@]}" <<'PYEOF' && pass "$name: np ${ranks// /, } identical" || fail "$name: results differ across rank counts"
import sys, h5py, numpy as np
name, paths = sys.argv[1], sys.argv[2:]
fs = [h5py.File(p, "r") for p in paths]
ref = fs[0]
def datasets(f):
    out = []
    f.visit(lambda n: out.append(n) if isinstance(f[n], h5py.Dataset) else None)
    return sorted(n for n in out if n.startswith(("rounds/", "clients/", "model/", "summary/", "sensitivity/")) and
                  "seconds" not in n)
for f in fs[1:]:
    if datasets(f) != datasets(ref):
        print("dataset lists differ"); sys.exit(1)
    for d in datasets(ref):
        if d == "clients/rank":
            continue
        a, b = np.asarray(ref[d][()]), np.asarray(f[d][()])
        if not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
            print("differs:", d, "at", int(f.attrs["num_ranks"]), "ranks"); sys.exit(1)
PYEOF
done
"$PY" - "$TMP" <<'PYEOF' && pass "the attackers, Krum's choices and the attacks' effect are recorded" || fail "robustness records"
import sys, h5py, numpy as np
tmp = sys.argv[1]
f = lambda n: h5py.File(f"{tmp}/{n}_np1.h5", "r")
honest = f("honest")
if "clients/malicious" in honest or "rounds/aggregator_selected" in honest:
    print("an honest mean run records robustness datasets"); sys.exit(1)
mal = f("alie_trimmed")["clients/malicious"][:]
if list(mal) != [0, 1, 0, 0, 0, 0, 1, 0]:
    print("attack.client_ids 1,6 gave", mal); sys.exit(1)
for n, count in (("signflip_krum", 2), ("gaussian_geomed", 2), ("labelflip_median", 3), ("scale_normclip", 1)):
    m = f(n)["clients/malicious"][:]
    if int(m.sum()) != count:
        print(n, "malicious", m); sys.exit(1)
k = f("signflip_krum")
sel, part = k["rounds/aggregator_selected"][:], k["rounds/participated"][:]
if not (np.all(sel.sum(axis=1) == 1) and np.all(part[sel == 1] == 1)):
    print("krum selected", sel, "participated", part); sys.exit(1)
if np.any(sel[:, k["clients/malicious"][:] == 1] == 1):
    print("krum chose a sign-flipped silo (scaled by 4)", sel); sys.exit(1)
mk = f("multikrum")["rounds/aggregator_selected"][:]
if not np.all(mk.sum(axis=1) == 3):
    print("multi_krum m = 3 selected", mk); sys.exit(1)
w = f("scale_normclip")["rounds/aggregator_weight"][:]
p = f("scale_normclip")["rounds/participated"][:]
if not (np.all((w[p == 1] > 0) & (w[p == 1] <= 1)) and np.all(np.isnan(w[p != 1]))):
    print("norm_clip factors", w); sys.exit(1)
g = honest["model/global"][:]
for n in ("signflip_mean", "labelflip_median", "ipm_cclip"):
    if np.array_equal(f(n)["model/global"][:], g):
        print(n, "left the model as the honest run's"); sys.exit(1)
PYEOF
finish
