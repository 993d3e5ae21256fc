#!/usr/bin/env bash
# label: integration
# timeout: 900
# cost: 100
# Update compression in real runs (docs/compression.md). topk at ratio 1 (with error feedback and the
# downlink) reproduces fl.compress = none bit for bit in every dataset none writes. qsgd and randk with
# error feedback (randk with the downlink too) give identical results files, bytes included, at 1, 2
# and 4 ranks. A qsgd + error feedback + downlink run stopped by a fault after a checkpoint and resumed
# at another rank count equals the uninterrupted run. The recorded bytes are qsgd's wire format's and
# add up to the totals. On the simulated clock, a silo's upload seconds are its encoded bytes over its
# uplink plus the latency, a deadline that the raw uploads miss is met by the encoded ones, and the
# clock's datasets are identical at 1, 2 and 4 ranks and after a resume. Bad option values and unsound
# combinations exit 2 with one line naming the option.
source "$(dirname "$0")/lib/common.sh"
COMMON=("${SMALL[@]}" --clients 5 --rounds 3 --fl.clients_per_round 4 --seed 3)

run() {  # NAME NP ARGS...
  local name=$1 np=$2
  shift 2
  "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "${COMMON[@]}" "$@" --output "$TMP/$name.h5" >"$TMP/$name.log" 2>&1 ||
    { cat "$TMP/$name.log"; fail "$name (np $np) exited non-zero"; }
}

COMPARE=$(cat <<'PYEOF'
import sys, h5py, numpy as np
mode, paths = sys.argv[1], sys.argv[2:]
fs = [h5py.File(p, "r") for p in paths]
# The bytes on the wire: the encoded sizes, which also replace the raw counts every run records.
BYTES = ("rounds/client_upload_encoded_bytes", "rounds/broadcast_encoded_bytes", "summary/upload_bytes_total",
         "summary/download_bytes_total", "summary/compression_ratio_mean", "rounds/client_upload_bytes",
         "rounds/client_download_bytes")
def datasets(f):
    out = []
    f.visit(lambda n: out.append(n) if isinstance(f[n], h5py.Dataset) else None)
    keep = [n for n in out if n.startswith(("rounds/", "clients/", "model/", "summary/", "sensitivity/"))
            and "seconds" not in n and n != "clients/rank"]
    return sorted(n for n in keep if mode != "as_none" or n not in BYTES)
ref = fs[0]
for f in fs[1:]:
    if datasets(f) != datasets(ref):
        print("dataset lists differ:", set(datasets(f)) ^ set(datasets(ref))); sys.exit(1)
    for d in datasets(ref):
        a, b = np.asarray(ref[d][()]), np.asarray(f[d][()])
        if not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
            print("differs:", d, f.filename); sys.exit(1)
if mode == "as_none" and "rounds/client_upload_encoded_bytes" not in fs[1]:
    print("the topk run records no bytes"); sys.exit(1)
if mode == "as_none" and not np.array_equal(fs[1]["rounds/client_upload_bytes"][()],
                                            fs[1]["rounds/client_upload_encoded_bytes"][()]):
    print("client_upload_bytes is not the encoded size"); sys.exit(1)
PYEOF
)

# --- topk at ratio 1 is fl.compress = none -------------------------------------------------------------
run none 1
run topk1 1 --fl.compress topk --fl.compress_ratio 1 --fl.error_feedback true --fl.compress_downlink true
"$PY" -c "$COMPARE" as_none "$TMP/none.h5" "$TMP/topk1.h5" && pass "topk ratio 1 reproduces none bit for bit" ||
  fail "topk ratio 1 differs from none"
"$PY" - "$TMP/none.h5" "$TMP/topk1.h5" <<'PYEOF' || fail "fl.compress = none records compression datasets"
import sys, h5py
if "summary/upload_bytes_total" in h5py.File(sys.argv[1], "r"): sys.exit(1)
PYEOF

# --- rank invariance with error feedback ------------------------------------------------------------
for c in "qsgd|--fl.compress qsgd --fl.compress_bits 3 --fl.error_feedback true" \
         "randk|--fl.compress randk --fl.compress_ratio 0.2 --fl.error_feedback true --fl.compress_downlink true"; do
  IFS='|' read -r name options <<<"$c"
  read -r -a extra <<<"$options"
  for np in 1 2 4; do run "${name}_np$np" $np "${extra[@]}"; done
  "$PY" -c "$COMPARE" all "$TMP/${name}_np1.h5" "$TMP/${name}_np2.h5" "$TMP/${name}_np4.h5" &&
    pass "$name with error feedback: np 1, 2, 4 identical (bytes included)" || fail "$name: results differ across rank counts"
done
"$PY" - "$TMP/none.h5" "$TMP/qsgd_np1.h5" "$TMP/randk_np1.h5" <<'PYEOF' && pass "compression changes the model" || fail "a compressed run left the model as none's"
import sys, h5py, numpy as np
g = [h5py.File(p, "r")["model/global"][:] for p in sys.argv[1:]]
sys.exit(0 if not np.array_equal(g[0], g[1]) and not np.array_equal(g[0], g[2]) else 1)
PYEOF

# --- the bytes are qsgd's wire format's and add up ---------------------------------------------------
"$PY" - "$TMP/qsgd_np1.h5" <<'PYEOF' && pass "qsgd bytes: 8 + sum(4 + ceil(m (bits + 1) / 8)) per upload, totals and ratio" || fail "qsgd bytes"
import sys, math, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
sizes = f["model/layers/size"][:]
per_upload = 8 + sum(4 + math.ceil(int(m) * 4 / 8) for m in sizes)  # bits 3: 4-bit codes
up, part = f["rounds/client_upload_encoded_bytes"][:], f["rounds/participated"][:]
bad = []
if not np.all(up[part == 1] == per_upload): bad.append(f"uploads {np.unique(up[part == 1])}, expected {per_upload}")
if not np.all(up[part != 1] == 0): bad.append("a client that sent nothing has bytes")
if f["summary/upload_bytes_total"][()] != up.sum(): bad.append("upload total")
down = f["rounds/broadcast_encoded_bytes"][:]
if not np.all(down == 4 * sizes.sum()): bad.append(f"broadcast without downlink compression {down}")
if f["summary/download_bytes_total"][()] != 5 * down.sum(): bad.append("download total")
ratio = f["summary/compression_ratio_mean"][()]
if not math.isclose(ratio, 4 * sizes.sum() / per_upload, rel_tol=1e-12): bad.append(f"ratio {ratio}")
for m in bad: print("   ", m)
sys.exit(1 if bad else 0)
PYEOF

# --- resume with residuals (clients' and the server's) ---------------------------------------------
RES=(--rounds 4 --fl.compress qsgd --fl.compress_bits 2 --fl.error_feedback true --fl.compress_downlink true)
run res_ref 2 "${RES[@]}"
RC=0
FEDSILO_FAULT=io:rank=1,round=3 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${COMMON[@]}" "${RES[@]}" --checkpoint.every 2 \
  --output "$TMP/res.h5" >"$TMP/res1.log" 2>&1 || RC=$?
[ "$RC" != 0 ] && [ -f "$TMP/res.h5.ckpt" ] || fail "the io fault did not stop the run after a checkpoint (exit $RC)"
"$MPIEXEC" -n 3 "$FEDSILO_EXE" "${COMMON[@]}" "${RES[@]}" --checkpoint.every 2 --resume --output "$TMP/res.h5" \
  >"$TMP/res2.log" 2>&1 || { cat "$TMP/res2.log"; fail "resume exited non-zero"; }
"$PY" -c "$COMPARE" all "$TMP/res_ref.h5" "$TMP/res.h5" && pass "resumed at 3 ranks with residuals = uninterrupted run" ||
  fail "resume with residuals differs"

# --- compression on the simulated clock ------------------------------------------------------------
# The uplink at 2 Mbit/s and 5 ms one way; downlink and compute free (their seconds: the latency, 0).
CLOCK=(--system.uplink_mbps constant:2 --system.latency_ms constant:5)
QSGD=(--fl.compress qsgd --fl.compress_bits 3 --fl.error_feedback true)
run clk_none 1 "${CLOCK[@]}"
run clk_qsgd 1 "${CLOCK[@]}" "${QSGD[@]}"
"$PY" - "$TMP/clk_qsgd.h5" <<'PYEOF' && pass "qsgd on the clock: upload seconds = encoded bytes x 8 / 2e6 + 0.005" ||
import sys, math, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
sizes = f["model/layers/size"][:]
per_upload = 8 + sum(4 + math.ceil(int(m) * 4 / 8) for m in sizes)
part = f["rounds/participated"][:] == 1
up, secs = f["rounds/client_upload_bytes"][:], f["rounds/client_upload_seconds"][:]
ok = np.all(up[part] == per_upload) and np.allclose(secs[part], per_upload * 8 / 2e6 + 0.005, rtol=1e-12, atol=0)
print("   upload seconds", np.unique(secs[part]), "expected", per_upload * 8 / 2e6 + 0.005)
sys.exit(0 if ok else 1)
PYEOF
  fail "qsgd upload seconds on the clock"
# A deadline halfway between the slowest encoded silo and the fastest raw one: every raw upload misses
# it, every encoded one meets it.
DEADLINE=$("$PY" - "$TMP/clk_none.h5" "$TMP/clk_qsgd.h5" <<'PYEOF'
import sys, h5py, numpy as np
def total(path, pick):
    f = h5py.File(path, "r")
    part = f["rounds/participated"][:] == 1
    t = (f["rounds/client_download_seconds"][:] + f["rounds/client_compute_seconds"][:] +
         f["rounds/client_upload_seconds"][:])
    return pick(t[part])
raw, enc = total(sys.argv[1], np.min), total(sys.argv[2], np.max)
assert enc < raw, (enc, raw)
print(repr((raw + enc) / 2))
PYEOF
) || fail "no deadline between the raw and the encoded uploads"
run dl_none 1 "${CLOCK[@]}" --fl.deadline_seconds "$DEADLINE"
for np in 1 2 4; do run "dl_qsgd_np$np" $np "${CLOCK[@]}" "${QSGD[@]}" --fl.deadline_seconds "$DEADLINE"; done
CLOCK_SAME=$(cat <<'PYEOF'
import sys, h5py, numpy as np
fs = [h5py.File(p, "r") for p in sys.argv[1:]]
for d in ("rounds/sim_seconds", "rounds/sim_time", "rounds/client_compute_seconds", "rounds/client_upload_seconds",
          "rounds/client_download_seconds", "rounds/participated", "model/global"):
    for f in fs[1:]:
        if not np.array_equal(fs[0][d][()], f[d][()], equal_nan=True):
            print("differs:", d, f.filename); sys.exit(1)
PYEOF
)
"$PY" - "$TMP/dl_none.h5" "$TMP/dl_qsgd_np1.h5" "$DEADLINE" <<'PYEOF' &&
import sys, h5py, numpy as np
none, qsgd = (h5py.File(p, "r")["rounds/participated"][:] for p in sys.argv[1:3])
selected = none != 0
print("   deadline", sys.argv[3], "s: raw", np.unique(none[selected]), "encoded", np.unique(qsgd[selected]))
sys.exit(0 if np.all(none[selected] == -2) and np.all(qsgd[selected] == 1) else 1)
PYEOF
  pass "a deadline the raw uploads miss and the qsgd uploads meet" || fail "deadline with compression"
"$PY" -c "$COMPARE" all "$TMP/dl_qsgd_np1.h5" "$TMP/dl_qsgd_np2.h5" "$TMP/dl_qsgd_np4.h5" &&
  "$PY" -c "$CLOCK_SAME" "$TMP/dl_qsgd_np1.h5" "$TMP/dl_qsgd_np2.h5" "$TMP/dl_qsgd_np4.h5" &&
  pass "qsgd on the clock with a deadline: np 1, 2, 4 identical (clock included)" ||
  fail "qsgd on the clock differs across rank counts"
RC=0
FEDSILO_FAULT=io:rank=1,round=3 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${COMMON[@]}" --rounds 4 "${CLOCK[@]}" "${QSGD[@]}" \
  --fl.compress_downlink true --checkpoint.every 2 --output "$TMP/clk_res.h5" >"$TMP/clk_res1.log" 2>&1 || RC=$?
[ "$RC" != 0 ] && [ -f "$TMP/clk_res.h5.ckpt" ] || fail "the io fault did not stop the clock run after a checkpoint (exit $RC)"
"$MPIEXEC" -n 3 "$FEDSILO_EXE" "${COMMON[@]}" --rounds 4 "${CLOCK[@]}" "${QSGD[@]}" --fl.compress_downlink true \
  --checkpoint.every 2 --resume --output "$TMP/clk_res.h5" >"$TMP/clk_res2.log" 2>&1 ||
  { cat "$TMP/clk_res2.log"; fail "resume of the clock run exited non-zero"; }
run clk_res_ref 2 --rounds 4 "${CLOCK[@]}" "${QSGD[@]}" --fl.compress_downlink true
"$PY" -c "$COMPARE" all "$TMP/clk_res_ref.h5" "$TMP/clk_res.h5" &&
  "$PY" -c "$CLOCK_SAME" "$TMP/clk_res_ref.h5" "$TMP/clk_res.h5" &&
  pass "qsgd + downlink on the clock resumed at 3 ranks = uninterrupted run (clock included)" ||
  fail "resume on the clock differs"

# --- bad values and refusals: exit 2, one line naming the option --------------------------------------
refuse() {  # WHAT EXPECTED-TEXT ARGS...
  local what=$1 expect=$2
  shift 2
  RC=0
  "$MPIEXEC" -n 1 "$FEDSILO_EXE" "${COMMON[@]}" --output "$TMP/bad.h5" "$@" >"$TMP/bad.log" 2>&1 || RC=$?
  local lines  # fedsilo's own lines (mpirun adds its banner about the non-zero exit)
  lines=$(grep -c '^fedsilo' "$TMP/bad.log" || true)
  if [ "$RC" = 2 ] && grep -qF -- "$expect" "$TMP/bad.log" && [ "$lines" = 1 ] && [ ! -e "$TMP/bad.h5" ]; then
    pass "$what: exit 2, one line"
  else
    fail "$what: exit $RC, $lines lines, expected '$expect'"
    cat "$TMP/bad.log" >&2
  fi
}
refuse "unknown method" "fl.compress = gzip" --fl.compress gzip
refuse "qsgd bits 0" "fl.compress_bits = 0" --fl.compress qsgd --fl.compress_bits 0
refuse "topk ratio 1.5" "fl.compress_ratio = 1.5" --fl.compress topk --fl.compress_ratio 1.5
refuse "bits with topk" "fl.compress_bits = 4" --fl.compress topk --fl.compress_bits 4
refuse "downlink without a method" "fl.compress_downlink" --fl.compress_downlink true
refuse "error feedback not a boolean" "fl.error_feedback = maybe" --fl.compress qsgd --fl.error_feedback maybe
refuse "zfp tolerance with qsgd" "fl.compress_tolerance" --fl.compress qsgd --fl.compress_tolerance 0.1
refuse "an algorithm without a reduced upload" "algorithm = local" --algorithm local --fl.compress qsgd
refuse "secure aggregation + qsgd" "privacy.secure_aggregation" --fl.compress qsgd --privacy.secure_aggregation true
refuse "secure aggregation + topk" "index sets" --fl.compress topk --privacy.secure_aggregation true
DP=(--privacy.level client --privacy.noise_multiplier 0.5 --privacy.clip 1)
refuse "client DP + qsgd" "sensitivity" "${DP[@]}" --fl.compress qsgd
refuse "client DP + error feedback" "fl.error_feedback = true with privacy.level = client" "${DP[@]}" --fl.compress topk --fl.error_feedback true
refuse "client DP, noise at the clients" "privacy.noise_placement = clients" "${DP[@]}" --fl.compress signsgd --privacy.noise_placement clients
# The sound combinations run: topk after clipping with the noise at the server, a robust aggregator.
run dp_topk 1 "${DP[@]}" --fl.compress topk --fl.compress_ratio 0.1
run trimmed_qsgd 1 --fl.compress qsgd --fl.aggregator trimmed_mean --fl.trim_fraction 0.25
[ -f "$TMP/dp_topk.h5" ] && [ -f "$TMP/trimmed_qsgd.h5" ] && pass "client DP + topk and trimmed_mean + qsgd run"
finish
