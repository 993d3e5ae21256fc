#!/usr/bin/env bash
# label: integration
# timeout: 900
# The simulated deployment (docs/system.md) end to end:
# - every bad spec or combination exits 2 with one line naming the option;
# - constant rates: each silo's download, compute and upload seconds, the round's simulated seconds and
#   the clock are the formulas on the file's own figures (bytes, samples, train_flops_per_sample), and
#   the bytes are the model's float32 parameters plus one float64 weight per block;
# - the clock changes no learned bit: accuracies, weights and the final model equal the run without it,
#   which writes no simulated-time dataset but the bytes;
# - keyed draws (lognormal rates, uniform links, jitter, a shared server link) and a deadline that
#   drops the slowest silo give identical files at 1, 2 and 4 ranks;
# - fedsilo calibrate prints a positive system.compute_gflops and the model's FLOPs per sample, and
#   refuses an unknown model with exit 2;
# - a run stopped after round 1 (injected write failure, periodic checkpoint) and resumed at 1 and 4
#   ranks ends with the uninterrupted run's clock and per-silo seconds.
source "$(dirname "$0")/lib/common.sh"
OUT="$TMP/x.h5"

printf 'client,value\n0,1\n1,x\n' >"$TMP/bad.csv"
expect_config_error "negative rate" system.compute_gflops --system.compute_gflops -1
expect_config_error "zero bandwidth" system.bandwidth_mbps --system.bandwidth_mbps list:10,0
expect_config_error "empty list" system.uplink_mbps --system.uplink_mbps list:
expect_config_error "unknown distribution" system.latency_ms --system.latency_ms gamma:1,2
expect_config_error "unreadable file" system.compute_gflops --system.compute_gflops file:"$TMP/none.csv"
expect_config_error "bad file row" system.compute_gflops --system.compute_gflops file:"$TMP/bad.csv"
expect_config_error "uniform a > b" system.downlink_mbps --system.downlink_mbps uniform:5,1
expect_config_error "lognormal sigma < 0" system.jitter --system.compute_gflops 1 --system.jitter lognormal:0,-1
expect_config_error "jitter alone" system.jitter --system.jitter 0.1
expect_config_error "negative server time" system.server_seconds --system.server_seconds -1
expect_config_error "deadline without the model" fl.deadline_seconds --fl.deadline_seconds 5
expect_config_error "deadline with a shared server link" fl.deadline_seconds --fl.deadline_seconds 5 \
  --system.bandwidth_mbps 10 --system.server_bandwidth_mbps 100
expect_config_error "deadline with a one-shot algorithm" fl.deadline_seconds --fl.deadline_seconds 5 \
  --system.bandwidth_mbps 10 --algorithm gems
expect_config_error "unknown target metric" eval.target_metric --eval.target_accuracy 0.5 --eval.target_metric best
expect_config_error "target above 1" eval.target_accuracy --eval.target_accuracy 1.5

run() {  # NP OUTPUT ARGS...
  local np=$1 out=$2
  shift 2
  "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "${SMALL[@]}" --rounds 3 --output "$out" "$@" >"$TMP/log" 2>&1 ||
    { cat "$TMP/log"; fail "run np=$np $*"; }
}

# Constant rates: the formulas, by hand from the file's figures.
run 2 "$TMP/off.h5"
run 2 "$TMP/const.h5" --system.compute_gflops 0.5 --system.bandwidth_mbps 20 --system.latency_ms 15 \
  --system.server_seconds 0.25 --eval.target_accuracy 0.05 --eval.target_metric mean_client
"$PY" - "$TMP/const.h5" "$TMP/off.h5" <<'PYEOF' && pass "constant rates: the formulas hold; the clock changes no learned bit" || fail "constant rates"
import sys, h5py, numpy as np
f, off = (h5py.File(p, "r") for p in sys.argv[1:])
sizes = f["model/layers/size"][:]
up = f["rounds/client_upload_bytes"][:]
expected_bytes = 4.0 * sizes.sum() + 8.0 * len(sizes)
assert np.all(up == expected_bytes), (up, expected_bytes)
assert np.all(f["rounds/client_download_bytes"][:] == 4.0 * sizes.sum())
flops = f["model"].attrs["train_flops_per_sample"]
assert flops > 0
n = f["clients/num_train"][:].astype(float)  # one local epoch (train.epochs = 1)
transfer = lambda b: b * 8 / 20e6 + 0.015
comp = f["rounds/client_compute_seconds"][:]
assert np.allclose(comp, flops * n / 0.5e9, rtol=1e-12), (comp, flops * n / 0.5e9)
assert np.allclose(f["rounds/client_upload_seconds"][:], transfer(up), rtol=1e-12)
assert np.allclose(f["rounds/client_download_seconds"][:], transfer(f["rounds/client_download_bytes"][:]), rtol=1e-12)
per_round = (f["rounds/client_download_seconds"][:] + comp + f["rounds/client_upload_seconds"][:]).max(axis=1) + 0.25
assert np.allclose(f["rounds/sim_seconds"][:], per_round, rtol=1e-12)
assert np.allclose(f["rounds/sim_time"][:], np.cumsum(per_round), rtol=1e-12)
assert np.all(f["clients/compute_gflops"][:] == 0.5) and np.all(f["clients/latency_ms"][:] == 15)
# the first evaluated round reaches 5% mean client accuracy
assert f["summary/rounds_to_target"][()] == 1 and f["summary/time_to_target"][()] == per_round[0]
for d in ("rounds/client_accuracy", "rounds/weight", "rounds/participated", "rounds/global_accuracy",
          "model/global", "summary/client_accuracy", "rounds/client_upload_bytes", "rounds/client_download_bytes"):
    assert np.array_equal(f[d][()], off[d][()], equal_nan=True), d
for d in ("rounds/sim_seconds", "rounds/sim_time", "rounds/client_compute_seconds", "clients/compute_gflops",
          "summary/time_to_target"):
    assert d not in off, d
print("per round:", per_round)
PYEOF

# Keyed draws, a shared server link, jitter, and a deadline at 1, 2, 4 ranks. list:100,100,100,0.005 makes
# silo 3 the slow one (about 1 s a round); the deadline (0.5 s) lies between the fast silos' time and its.
DRAWS=(--clients 6 --system.compute_gflops lognormal:0,0.5 --system.bandwidth_mbps uniform:50,500
  --system.latency_ms list:5,20 --system.jitter 0.4 --system.server_bandwidth_mbps 300 --system.server_seconds 0.1)
DEADLINE=(--system.compute_gflops list:100,100,100,0.005 --system.bandwidth_mbps 100 --fl.deadline_seconds 0.5
  --algorithm ditto)
for np in 1 2 4; do
  run $np "$TMP/draws_np$np.h5" "${DRAWS[@]}"
  run $np "$TMP/deadline_np$np.h5" "${DEADLINE[@]}"
done
"$PY" - "$TMP"/draws_np{1,2,4}.h5 "$TMP"/deadline_np{1,2,4}.h5 <<'PYEOF' && pass "keyed draws and the deadline: identical at 1, 2 and 4 ranks; the slow silo is dropped" || fail "rank invariance of the clock"
import sys, h5py, numpy as np
names = ("rounds/sim_seconds", "rounds/sim_time", "rounds/client_compute_seconds", "rounds/client_upload_seconds",
         "rounds/client_download_seconds", "rounds/client_upload_bytes", "rounds/client_download_bytes",
         "rounds/participated", "rounds/weight", "rounds/client_accuracy", "model/global", "clients/compute_gflops",
         "clients/uplink_mbps", "clients/downlink_mbps", "clients/latency_ms")
for group in (sys.argv[1:4], sys.argv[4:7]):
    fs = [h5py.File(p, "r") for p in group]
    for f in fs[1:]:
        for d in names:
            assert np.array_equal(fs[0][d][()], f[d][()], equal_nan=True), (d, f.attrs["num_ranks"])
draws = h5py.File(sys.argv[1], "r")
g = draws["clients/compute_gflops"][:]
assert len(set(g)) == len(g), g                 # drawn per silo
assert np.array_equal(draws["clients/uplink_mbps"][:], draws["clients/downlink_mbps"][:])  # one symmetric draw
dl = h5py.File(sys.argv[4], "r")
p = dl["rounds/participated"][:]
assert np.all(p[:, 3] == -2) and np.all(p[:, [0, 1, 2]] == 1), p
assert np.all(dl["rounds/weight"][:, 3] == 0) and np.all(dl["rounds/client_upload_bytes"][:, 3] == 0)
assert np.all(dl["rounds/sim_seconds"][:] == 0.5), dl["rounds/sim_seconds"][:]  # the server waits for the deadline
print("deadline rounds:", dl["rounds/sim_seconds"][:], "draws:", draws["rounds/sim_seconds"][:])
PYEOF

# Resume across rank counts with the clock on.
resume_across_ranks "the clock continues exactly" 2 4 \
  "rounds/sim_seconds rounds/sim_time rounds/client_compute_seconds rounds/client_upload_seconds rounds/client_upload_bytes model/global clients/compute_gflops" \
  "${SMALL[@]}" "${DRAWS[@]}" --rounds 4 --checkpoint.every 1
# calibrate: the rate that anchors the model to this machine.
if "$FEDSILO_EXE" calibrate --model mlp --model.hidden 16 --dataset fashion_mnist --train.batch 16 >"$TMP/cal" 2>&1 &&
  grep -Eq '^system.compute_gflops = [0-9.]+(e[+-]?[0-9]+)?$' "$TMP/cal" && ! grep -q 'compute_gflops = 0$' "$TMP/cal" &&
  grep -q '^training FLOPs per sample: [1-9]' "$TMP/cal"; then
  pass "calibrate: $(tail -1 "$TMP/cal")"
else
  cat "$TMP/cal" >&2; fail "calibrate"
fi
rc=0
"$FEDSILO_EXE" calibrate --model nope >"$TMP/cal" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q "model = nope" "$TMP/cal" && pass "calibrate: unknown model exits 2" || fail "calibrate --model nope: exit $rc"
finish
