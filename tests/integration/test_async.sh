#!/usr/bin/env bash
# label: integration
# timeout: 900
# cost: 110
# Asynchronous aggregation on the simulated clock (docs/async.md) end to end:
# - bad options and settings that need synchronous rounds exit 2 with one line naming the option;
#   the asynchronous options with a synchronous algorithm (PLayer-FL, GEMS, alpha-FedAvg) too;
# - FedBuff with buffer_size = K, equal silos and server_lr = 1 is FedAvg (the same global model to
#   float rounding, round by round accuracy);
# - FedAsync with one silo and alpha = 1 is that silo's local training (its model bit for bit);
# - FedCompass with equal silos, q_min = q_max = one epoch's steps and alpha = 1 is FedAvg after one
#   version per silo's first update: versions K - 1 + r are FedAvg's rounds r (float rounding);
# - heterogeneous silo speeds (lognormal compute, uniform links, jitter), a concurrency limit and
#   staleness functions give identical files at 1, 2 and 4 ranks, with the staleness and clock datasets
#   (FedBuff, FedAsync and FedCompass, whose versions aggregate arrival groups);
# - a rank that fails mid-schedule ends every rank with exit 1 within the timeout, no results file;
# - a run stopped after version 3 with silos in flight, resumed at 1 and 4 ranks, ends as the
#   uninterrupted run (FedBuff; and FedCompass stopped after version 7, a late update waiting);
# - equal silo speeds (a wave's versions reduced in one call): a run stopped between the versions of a
#   wave, resumed at 1 and 4 ranks, ends as the uninterrupted run at 2 ranks.
source "$(dirname "$0")/lib/common.sh"
OUT="$TMP/x.h5"

expect_config_error "alpha 0" fedasync.alpha --algorithm fedasync --fedasync.alpha 0
expect_config_error "alpha above 1" fedasync.alpha --algorithm fedasync --fedasync.alpha 1.5
expect_config_error "unknown staleness function" fedasync.staleness --algorithm fedasync --fedasync.staleness exp
expect_config_error "negative a" fedasync.a --algorithm fedasync --fedasync.a -1
expect_config_error "buffer above K" fedbuff.buffer_size --algorithm fedbuff --fedbuff.buffer_size 5
expect_config_error "negative buffer" fedbuff.buffer_size --algorithm fedbuff --fedbuff.buffer_size -1
expect_config_error "server lr 0" fedbuff.server_lr --algorithm fedbuff --fedbuff.buffer_size 2 --fedbuff.server_lr 0
expect_config_error "staleness scaling not a bool" fedbuff.staleness_scaling --algorithm fedbuff \
  --fedbuff.staleness_scaling maybe
expect_config_error "negative concurrency" fl.max_concurrency --algorithm fedbuff --fedbuff.buffer_size 2 \
  --fl.max_concurrency -1
expect_config_error "negative every_seconds" eval.every_seconds --algorithm fedasync --eval.every_seconds -1
expect_config_error "concurrency with playerfl" fl.max_concurrency --algorithm playerfl --fl.max_concurrency 2
expect_config_error "concurrency with gems" fl.max_concurrency --algorithm gems --fl.max_concurrency 2
expect_config_error "every_seconds with alpha_fedavg" eval.every_seconds --algorithm alpha_fedavg --eval.every_seconds 5
expect_config_error "clients per round" fl.clients_per_round --algorithm fedasync --fl.clients_per_round 2
expect_config_error "deadline" fl.deadline_seconds --algorithm fedbuff --fedbuff.buffer_size 2 \
  --system.bandwidth_mbps 10 --fl.deadline_seconds 5
expect_config_error "shared server link" system.server_bandwidth_mbps --algorithm fedasync --system.bandwidth_mbps 10 \
  --system.server_bandwidth_mbps 100
expect_config_error "client-level DP" privacy.level --algorithm fedbuff --fedbuff.buffer_size 2 --privacy.level client \
  --privacy.noise_multiplier 1 --privacy.clip 1
expect_config_error "after_local evaluation" eval.point --algorithm fedasync --eval.point after_local
expect_config_error "server optimizer with fedasync" fl.server_optimizer --algorithm fedasync --fl.server_optimizer adam
expect_config_error "q_min 0" fedcompass.q_min --algorithm fedcompass --fedcompass.q_min 0
expect_config_error "q_max below q_min" fedcompass.q_max --algorithm fedcompass --fedcompass.q_min 30 --fedcompass.q_max 20
expect_config_error "lambda below 1" fedcompass.lambda --algorithm fedcompass --fedcompass.lambda 0.5
expect_config_error "speed momentum 0" fedcompass.speed_momentum --algorithm fedcompass --fedcompass.speed_momentum 0
expect_config_error "compass alpha 0" fedcompass.alpha --algorithm fedcompass --fedcompass.alpha 0
expect_config_error "compass staleness function" fedcompass.staleness --algorithm fedcompass --fedcompass.staleness exp
expect_config_error "concurrency with fedcompass" fl.max_concurrency --algorithm fedcompass --fl.max_concurrency 2
expect_config_error "server optimizer with fedcompass" fl.server_optimizer --algorithm fedcompass --fl.server_optimizer adam
expect_config_error "clients per round with fedcompass" fl.clients_per_round --algorithm fedcompass --fl.clients_per_round 2

run() {  # NP OUTPUT ARGS...
  local np=$1 out=$2
  shift 2
  "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "${SMALL[@]}" --rounds 3 --output "$out" "$@" >"$TMP/log" 2>&1 ||
    { cat "$TMP/log"; fail "run np=$np $*"; }
}

# The reductions.
run 2 "$TMP/fedavg.h5" --algorithm fedavg
run 2 "$TMP/fedbuff_k.h5" --algorithm fedbuff --fedbuff.buffer_size 4 --fedbuff.server_lr 1
run 1 "$TMP/local1.h5" --clients 1 --algorithm local --output.client_models true
run 1 "$TMP/fedasync1.h5" --clients 1 --algorithm fedasync --fedasync.alpha 1
# 80 training samples per silo in batches of 16: one epoch is 5 steps.
run 2 "$TMP/compass_k.h5" --rounds 6 --algorithm fedcompass --fedcompass.q_min 5 --fedcompass.q_max 5 \
  --fedcompass.alpha 1
"$PY" - "$TMP"/fedavg.h5 "$TMP"/fedbuff_k.h5 "$TMP"/local1.h5 "$TMP"/fedasync1.h5 "$TMP"/compass_k.h5 <<'PYEOF' && pass "reductions: FedBuff(B = K, eta = 1) is FedAvg; FedAsync(one silo, alpha = 1) is local training; FedCompass(equal silos, alpha = 1) is FedAvg" || fail "reductions"
import sys, h5py, numpy as np
avg, buff, local, fa, fc = (h5py.File(p, "r") for p in sys.argv[1:])
assert np.array_equal(fc["clients/num_train"][:], [80] * 4), fc["clients/num_train"][:]
gc = fc["model/global"][:]
assert np.allclose(avg["model/global"][:], gc, rtol=1e-5, atol=1e-6), np.abs(avg["model/global"][:] - gc).max()
assert np.allclose(avg["rounds/client_accuracy"][:], fc["rounds/client_accuracy"][3:], atol=0.011)
# Versions 1-4: each silo's first update alone (staleness 0, 1, 2, 3); then one group of all four per
# version, every job from the previous version; 1 s per local step without a system model.
st = fc["rounds/staleness"][:]
assert np.array_equal(st[:4], np.where(np.eye(4) == 1, np.arange(4.0), np.nan), equal_nan=True), st
assert np.array_equal(st[4:], np.zeros((2, 4))) and np.array_equal(fc["rounds/participated"][4:], np.ones((2, 4)))
assert np.array_equal(fc["rounds/sim_time"][:], [5.0, 5.0, 5.0, 5.0, 10.0, 15.0]), fc["rounds/sim_time"][:]
print("FedCompass - FedAvg:", np.abs(avg["model/global"][:] - gc).max())
ga, gb = avg["model/global"][:], buff["model/global"][:]
assert np.allclose(ga, gb, rtol=1e-5, atol=1e-6), np.abs(ga - gb).max()
assert np.allclose(avg["rounds/client_accuracy"][:], buff["rounds/client_accuracy"][:], atol=0.011)
assert np.array_equal(buff["rounds/staleness"][:], np.zeros((3, 4))), buff["rounds/staleness"][:]
assert np.array_equal(buff["rounds/sim_time"][:], [1.0, 2.0, 3.0])  # no system model: every job 1 s
lm, fm = local["model/clients"][0], fa["model/global"][:]
assert np.array_equal(lm, fm), np.abs(lm - fm).max()  # a version of one update takes it as it is
assert np.allclose(local["summary/client_accuracy"][:], fa["summary/client_accuracy"][:], atol=1e-9)
print("FedBuff - FedAvg:", np.abs(ga - gb).max(), " FedAsync - local:", np.abs(lm - fm).max())
PYEOF

# Heterogeneous silos at 1, 2 and 4 ranks.
HET=(--clients 6 --rounds 8 --system.compute_gflops lognormal:0,1 --system.bandwidth_mbps uniform:50,500
  --system.latency_ms 10 --system.jitter 0.3)
COMPASS=("${HET[@]}" --algorithm fedcompass --fedcompass.q_min 2 --fedcompass.q_max 8 --fedcompass.staleness polynomial)
for np in 1 2 4; do
  run $np "$TMP/fa_np$np.h5" "${HET[@]}" --algorithm fedasync --fedasync.staleness polynomial --fedasync.a 0.5 \
    --eval.every 3
  run $np "$TMP/fb_np$np.h5" "${HET[@]}" --algorithm fedbuff --fedbuff.buffer_size 2 --fl.max_concurrency 4 \
    --fl.server_optimizer momentum --fl.server_lr 0.5
  run $np "$TMP/fc_np$np.h5" "${COMPASS[@]}" --rounds 12
done
"$PY" - "$TMP"/fa_np{1,2,4}.h5 "$TMP"/fb_np{1,2,4}.h5 "$TMP"/fc_np{1,2,4}.h5 <<'PYEOF' && pass "heterogeneous speeds: identical at 1, 2 and 4 ranks; staleness, clock and evaluation per version" || fail "rank invariance of the asynchronous driver"
import sys, h5py, numpy as np
names = ("rounds/sim_time", "rounds/sim_seconds", "rounds/staleness", "rounds/participated", "rounds/weight",
         "rounds/client_accuracy", "rounds/global_accuracy", "rounds/client_upload_bytes", "model/global",
         "summary/client_accuracy")
for group in (sys.argv[1:4], sys.argv[4:7], sys.argv[7:10]):
    fs = [h5py.File(p, "r") for p in group]
    for f in fs[1:]:
        for d in names:
            assert np.array_equal(fs[0][d][()], f[d][()], equal_nan=True), (d, f.attrs["num_ranks"])
fa, fb = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[4], "r")
for f, per_version in ((fa, 1), (fb, 2)):
    st, p = f["rounds/staleness"][:], f["rounds/participated"][:]
    assert st.shape == (8, 6) and np.array_equal(~np.isnan(st), p == 1), (st, p)
    assert np.all(p.sum(axis=1) <= per_version) and np.all(p.sum(axis=1) >= 1)
    t = f["rounds/sim_time"][:]
    assert np.all(np.diff(t) >= 0) and np.allclose(np.diff(np.concatenate([[0], t])), f["rounds/sim_seconds"][:])
assert np.nanmax(fa["rounds/staleness"][:]) > 0  # slow silos train on old versions
ev = ~np.isnan(fa["rounds/global_accuracy"][:])
assert list(np.flatnonzero(ev)) == [0, 3, 6, 7], ev  # eval.every = 3 versions, and the last
print("fedasync staleness:", np.nanmax(fa["rounds/staleness"][:]), "sim_time:", fa["rounds/sim_time"][:])
fc = h5py.File(sys.argv[7], "r")
p = fc["rounds/participated"][:]
assert p.shape == (12, 6) and p[0].sum() == 1 and np.all(p.sum(axis=1) >= 1), p  # a first update alone
assert p.sum(axis=1).max() >= 2, p  # later versions aggregate arrival groups
assert np.all(np.diff(fc["rounds/sim_time"][:]) >= 0)
print("fedcompass participants per version:", p.sum(axis=1))
PYEOF

# A rank that fails mid-schedule: its clients' losses become NaN in the jobs that start from version 1 on.
rc=0
FEDSILO_FAULT=nan:rank=1,round=1 timeout 120 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${SMALL[@]}" "${HET[@]}" --rounds 16 \
  --algorithm fedasync --output "$TMP/fail.h5" >"$TMP/log" 2>&1 || rc=$?
if [ "$rc" -eq 1 ] && [ ! -e "$TMP/fail.h5" ] && [ ! -e "$TMP/fail.h5.partial" ] && grep -q "error" "$TMP/log"; then
  pass "a rank failing mid-schedule: exit 1, no results file ($(grep -m1 error "$TMP/log"))"
else
  cat "$TMP/log" >&2; fail "rank failure mid-schedule: exit $rc"
fi

# Resume with silos in flight, across rank counts.
resume_across_ranks "with silos in flight: identical to the uninterrupted run" 3 8 \
  "rounds/sim_time rounds/staleness rounds/client_accuracy rounds/weight model/global summary/client_accuracy" \
  "${SMALL[@]}" "${HET[@]}" --algorithm fedbuff --fedbuff.buffer_size 2 --checkpoint.every 1
# Its reference is fc_np2.h5 above: the same run without checkpoints.
RESUME_REF="$TMP/fc_np2.h5" resume_across_ranks "FedCompass with groups in flight and a late update buffered: identical to the uninterrupted run" 7 12 \
  "rounds/sim_time rounds/staleness rounds/participated rounds/client_accuracy model/global summary/client_accuracy" \
  "${SMALL[@]}" "${COMPASS[@]}" --rounds 12 --checkpoint.every 1

# Equal silo speeds: every wave's versions are reduced in one call (fl/version_sums.hpp). A run stopped
# between the versions of a wave (after version 1 of 3), resumed at 1 and 4 ranks, ends as the
# uninterrupted run at 2 ranks: the batched reductions of the later waves agree at 1, 2 and 4 ranks.
EQUAL=(--clients 6 --rounds 9 --algorithm fedbuff --fedbuff.buffer_size 2 --eval.every 2)
resume_across_ranks "stopped between the versions of a wave: identical to the uninterrupted run" 1 9 \
  "rounds/sim_time rounds/global_accuracy rounds/client_accuracy rounds/weight model/global summary/client_accuracy" \
  "${SMALL[@]}" "${EQUAL[@]}" --checkpoint.every 1
"$PY" -c "import sys, h5py, numpy as np; sys.exit(0 if np.array_equal(h5py.File(sys.argv[1])['rounds/sim_time'][:], np.repeat([1.0, 2.0, 3.0], 3)) else 1)" \
  "$TMP/ref.h5" && pass "equal speeds: three versions a wave" || fail "equal speeds: not three versions a wave"
finish
