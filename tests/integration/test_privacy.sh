#!/usr/bin/env bash
# label: integration
# timeout: 900
# cost: 140
# Privacy in real runs (docs/privacy.md):
#  * the /privacy/epsilon a client-level run records, round by round, is what `fedsilo epsilon` prints
#    for the same q, z and rounds, and the progress line prints it;
#  * private runs are identical at 1, 2 and 4 ranks (client level with noise at the clients, secure
#    aggregation and dropouts; sample level, on mlp, cnn_mcmahan, cnn_playerfl, lstm and transformer_playerfl), and with secure aggregation the whole file equals the
#    run without it but for the /privacy/secagg_* records (dropouts: the recovery round);
#  * kill (SIGTERM) and --resume at another rank count gives the uninterrupted file (the accountants,
#    the adaptive clip and the histories are in the checkpoint);
#  * bad privacy settings: one error line naming the option or the algorithm, exit 2, ranks gone, no file;
#  * fedsilo-analysis reads the run's epsilon.
# Which models: PRIVACY_MODELS=core (this test, the default run) checks rank invariance on the client-level
# run, mlp, cnn_mcmahan and lstm, and kill-and-resume on the client-level run and mlp; PRIVACY_MODELS=all
# (test_privacy_models, label long) adds cnn_playerfl and transformer_playerfl to the rank invariance,
# cnn_mcmahan and transformer_playerfl to kill-and-resume, and a private run of the PLayer-FL CIFAR-10
# configuration (cnn_playerfl_cifar) at 1 and 4 ranks.
TEST_NAME=test_privacy
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
SCOPE=${PRIVACY_MODELS:-core}
case $SCOPE in core | all) ;; *) echo "PRIVACY_MODELS=$SCOPE: expected core or all" >&2; exit 2 ;; esac
make_workdir
BASE=("${TINY[@]}" --clients 6 --rounds 4 --fl.clients_per_round 3 --train.batch 16 --eval.batch 100 --seed 3)

run_to() {  # LOG NP ARGS...: sets RC
  local logf=$1 np=$2
  shift 2
  RC=0
  "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "$@" >"$logf" 2>&1 || RC=$?
}

# same A B: every dataset equal except wall times, the rank placement and secure aggregation's own
# records (present in one file only, or timings).
same() {  # A B [DATASET ...]: the two files agree in every dataset but timings and the ones named
  "$PY" - "$@" <<'PYEOF'
import sys, h5py, numpy as np
SKIP = {"rounds/seconds", "rounds/train_seconds", "summary/seconds_per_round", "clients/rank", "privacy/secagg_seconds"}
SKIP |= set(sys.argv[3:])
def items(f):
    out = {}
    f.visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
    return out
with h5py.File(sys.argv[1], "r") as fa, h5py.File(sys.argv[2], "r") as fb:
    a, b = items(fa), items(fb)
bad, compared = [], 0
for k in sorted(set(a) | set(b)):
    if k in SKIP or (k.startswith("privacy/secagg_") and (k not in a or k not in b)):
        continue
    if k not in a or k not in b:
        bad.append(f"/{k}: only in one file"); continue
    x, y = np.asarray(a[k]), np.asarray(b[k])
    same = x.shape == y.shape and (np.array_equal(x, y, equal_nan=True) if x.dtype.kind in "fc" else np.array_equal(x, y))
    compared += 1
    if not same: bad.append(f"/{k}: differs")
for m in bad: print("   ", m)
print("   ", compared, "datasets compared")
sys.exit(1 if bad or compared < 20 else 0)
PYEOF
}

# ---- epsilon: the record, the progress line and the command agree --------------------------------
run_to "$WORK/eps.log" 2 "${BASE[@]}" --privacy.level client --privacy.noise_multiplier 1.3 --output "$WORK/eps.h5"
[ "$RC" = 0 ] || { tail -5 "$WORK/eps.log" >&2; die "client-level run exited $RC"; }
for t in 1 4; do
  want=$("$FEDSILO_EXE" epsilon --sample_rate 0.5 --noise_multiplier 1.3 --steps $t --delta 1e-5 | sed -n 's/^epsilon = //p')
  got=$("$PY" -c "import h5py,sys; print('%.6g' % h5py.File(sys.argv[1])['privacy/epsilon'][$t - 1])" "$WORK/eps.h5")
  [ "$got" = "$want" ] && log "epsilon after $t rounds: $got (fedsilo epsilon: $want)" ||
    fail "epsilon after $t rounds: the run recorded $got, fedsilo epsilon prints $want"
done
grep -q 'privacy: level client, noise multiplier z = 1.3' "$WORK/eps.log" || fail "no privacy line in the banner"
last=$(awk '$1 == 3 {print $NF}' "$WORK/eps.log")
[ "$last" = "$("$PY" -c "print('%.4g' % float('$want'))")" ] || fail "progress line of round 3 ends with '$last', expected epsilon $want"

# ---- rank invariance and secure aggregation ------------------------------------------------------
CLIENTS_SECAGG=(--privacy.level client --privacy.target_epsilon 6 --privacy.noise_placement clients
  --privacy.secure_aggregation true --privacy.secagg_threshold 1 --fl.dropout 0.3)
SAMPLE=(--privacy.level sample --privacy.noise_multiplier 1.1 --algorithm fedprox --model.dropout 0.2)
# DP-SGD on the convolutional, recurrent and attention presets (per-example norms of Conv2D, LSTM,
# Embedding, self-attention and feed-forward).
# The CNNs' runs evaluate on the first 1,000 test images (lib/fmnist_subset.py): on all 10,000 their
# evaluations took most of their time, and what is checked here (rank invariance, epsilon) is the same.
FM_DIR=$("$FEDSILO_EXE" --dataset fashion_mnist --dry-run --output "$WORK/dir.h5" | sed -n 's/^dir = //p')
"$PY" "$FEDSILO_SOURCE_DIR/tests/integration/lib/fmnist_subset.py" "$FM_DIR" "$WORK/fmnist_1k" 1000 ||
  die "could not write the 1,000-image FashionMNIST test set"
SAMPLE_CNN=(--privacy.level sample --privacy.noise_multiplier 1.1 --model cnn_mcmahan --model.dropout 0.2 --rounds 2
  --data.dir "$WORK/fmnist_1k")
SAMPLE_PLAYERFL=(--privacy.level sample --privacy.noise_multiplier 1.1 --model cnn_playerfl --algorithm playerfl
  --playerfl.split 3 --rounds 2 --data.dir "$WORK/fmnist_1k")
SAMPLE_LSTM=(--privacy.level sample --privacy.noise_multiplier 1.1 --dataset sequence --partition.scheme natural
  --data.users 6 --data.samples_per_user 60 --model lstm --model.lstm_hidden 16 --model.embed_dim 8 --rounds 2)
SAMPLE_TRANSFORMER=(--privacy.level sample --privacy.noise_multiplier 1.1 --dataset sequence --partition.scheme natural
  --data.users 6 --data.samples_per_user 60 --data.seq_length 12 --model transformer_playerfl --model.embed_dim 8
  --rounds 2)
INVARIANT=(clients_secagg sample sample_cnn sample_lstm)
[ "$SCOPE" = all ] && INVARIANT+=(sample_playerfl sample_transformer)
for name in "${INVARIANT[@]}"; do
  declare -n args="${name^^}"
  for np in 1 2 4; do
    run_to "$WORK/$name$np.log" $np "${BASE[@]}" "${args[@]}" --output "$WORK/$name$np.h5"
    [ "$RC" = 0 ] || { fail "$name at $np ranks exited $RC"; tail -5 "$WORK/$name$np.log" >&2; }
  done
  for np in 2 4; do
    same "$WORK/${name}1.h5" "$WORK/$name$np.h5" && log "$name: 1 and $np ranks identical" || fail "$name: 1 and $np ranks differ"
  done
done
"$PY" -c "import h5py,sys; d=h5py.File(sys.argv[1])['privacy/secagg_dropped'][:]; sys.exit(0 if d.sum() > 0 else 1)" \
  "$WORK/clients_secagg1.h5" || fail "no client dropped in the secure-aggregation run: recovery untested"
run_to "$WORK/plain.log" 3 "${BASE[@]}" "${CLIENTS_SECAGG[@]:0:6}" --fl.dropout 0.3 --output "$WORK/plain.h5"
# The bytes on the wire are the one thing secure aggregation changes (masked words and the protocol's
# messages, docs/system.md), and they must grow.
same "$WORK/plain.h5" "$WORK/clients_secagg1.h5" rounds/client_upload_bytes rounds/client_download_bytes &&
  log "secure aggregation: the file equals the run without it, bytes aside" ||
  fail "secure aggregation changed the results (above)"
"$PY" - "$WORK/plain.h5" "$WORK/clients_secagg1.h5" <<'PYEOF' || fail "secure aggregation did not add to the bytes uploaded"
import sys, h5py
plain, masked = (h5py.File(p, "r")["rounds/client_upload_bytes"][:].sum() for p in sys.argv[1:])
print("    upload bytes: %d plain, %d under secure aggregation" % (plain, masked))
sys.exit(0 if masked > plain > 0 else 1)
PYEOF

# A sample-level run's epsilon of each client is `fedsilo epsilon` at its sampling rate and its steps.
for name in sample sample_cnn; do
  read -r q steps eps < <("$PY" -c "import h5py,sys; f=h5py.File(sys.argv[1]); print('%.17g %d %.6g' % (f['privacy/sampling_rate'][0], f['privacy/steps'][0], f['privacy/epsilon'][-1, 0]))" "$WORK/${name}1.h5")
  sample_want=$("$FEDSILO_EXE" epsilon --sample_rate "$q" --noise_multiplier 1.1 --steps "$steps" --delta 1e-5 | sed -n 's/^epsilon = //p')
  [ "$eps" = "$sample_want" ] && [ "$steps" -gt 0 ] &&
    log "$name: client 0's epsilon after $steps steps: $eps (fedsilo epsilon: $sample_want)" ||
    fail "$name: client 0 recorded epsilon $eps after $steps steps, fedsilo epsilon prints $sample_want"
done

# ---- DP-SGD on the PLayer-FL CIFAR-10 CNN (PRIVACY_MODELS=all) ----------------------------------------
# configs/playerfl_cifar10.ini as shipped but for augmentation (DP-SGD's batches are not augmented), on
# generated CIFAR-10 batches (lib/image_data.py): a private run ends at 1 and at 4 ranks with the same
# file, and its recorded epsilon is `fedsilo epsilon` at its sampling rate and steps.
if [ "$SCOPE" = all ]; then
  "$PY" "$FEDSILO_SOURCE_DIR/tests/integration/lib/image_data.py" "$WORK/images" 40 15000 || die "could not generate the images"
  CIFAR=(--config "$FEDSILO_SOURCE_DIR/configs/playerfl_cifar10.ini" --data.dir "$WORK/images/cifar10" --data.limit 60
    --rounds 2 --checkpoint.every 0 --privacy.level sample --privacy.noise_multiplier 1.1 --data.augment none
    --data.augment_scale 1 --data.augment_flip false --data.augment_crop_padding 0 --data.augment_rotation 10)
  for np in 1 4; do
    run_to "$WORK/cifar$np.log" $np "${CIFAR[@]}" --output "$WORK/cifar$np.h5"
    [ "$RC" = 0 ] || { fail "cnn_playerfl_cifar under DP-SGD at $np ranks exited $RC"; tail -5 "$WORK/cifar$np.log" >&2; }
  done
  same "$WORK/cifar1.h5" "$WORK/cifar4.h5" && log "cnn_playerfl_cifar under DP-SGD: 1 and 4 ranks identical" ||
    fail "cnn_playerfl_cifar under DP-SGD: 1 and 4 ranks differ"
  read -r cq csteps ceps < <("$PY" -c "import h5py,sys; f=h5py.File(sys.argv[1]); print('%.17g %d %.6g' % (f['privacy/sampling_rate'][0], f['privacy/steps'][0], f['privacy/epsilon'][-1, 0]))" "$WORK/cifar1.h5")
  cwant=$("$FEDSILO_EXE" epsilon --sample_rate "$cq" --noise_multiplier 1.1 --steps "$csteps" --delta 1e-5 | sed -n 's/^epsilon = //p')
  [ "$ceps" = "$cwant" ] && [ "$csteps" -gt 0 ] && log "cnn_playerfl_cifar: client 0's epsilon after $csteps steps: $ceps" ||
    fail "cnn_playerfl_cifar: client 0 recorded epsilon $ceps after $csteps steps, fedsilo epsilon prints $cwant"
fi

# ---- kill and resume -------------------------------------------------------------------------------
# resume_case NAME ARGS...: uninterrupted at 2 ranks; stopped by SIGTERM after round 2 (exit 75); resumed
# at 3 ranks; the finished file must equal the uninterrupted one.
resume_case() {
  local name=$1 pid
  shift
  run_to "$WORK/${name}_ref.log" 2 "$@" --output "$WORK/${name}_ref.h5"
  FEDSILO_FAULT=slow:rank=0,ms=300 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "$@" --output "$WORK/$name.h5" >"$WORK/${name}_int.log" 2>&1 &
  pid=$!
  if wait_for_line '^ +2 ' "$WORK/${name}_int.log" 120 "$pid"; then signal_ranks TERM "$pid" || true; fi
  RC=0
  wait "$pid" || RC=$?
  [ "$RC" = 75 ] && [ -f "$WORK/$name.h5.ckpt" ] || fail "$name: interrupted run exited $RC (expected 75) or left no checkpoint"
  run_to "$WORK/${name}_res.log" 3 "$@" --output "$WORK/$name.h5" --resume
  [ "$RC" = 0 ] && grep -q '^resuming from' "$WORK/${name}_res.log" ||
    { fail "$name: resumed run exited $RC"; tail -5 "$WORK/${name}_res.log" >&2; }
  same "$WORK/${name}_ref.h5" "$WORK/$name.h5" && log "$name: kill and resume identical to the uninterrupted run" ||
    fail "$name: the resumed run differs from the uninterrupted one"
}
resume_case client_adaptive_secagg "${BASE[@]}" --rounds 6 --privacy.level client --privacy.noise_multiplier 0.8 \
  --privacy.adaptive_clip true --privacy.clip_count_std 1 --privacy.secure_aggregation true
resume_case sample "${BASE[@]}" --rounds 6 --privacy.level sample --privacy.target_epsilon 5
if [ "$SCOPE" = all ]; then
  resume_case sample_cnn "${BASE[@]}" --rounds 6 --privacy.level sample --privacy.target_epsilon 5 --model cnn_mcmahan
  resume_case sample_transformer "${BASE[@]}" "${SAMPLE_TRANSFORMER[@]:0:2}" --privacy.target_epsilon 5 \
    "${SAMPLE_TRANSFORMER[@]:4}" --rounds 6
fi

# ---- bad input -------------------------------------------------------------------------------------
check_bad() {  # NAME TEXT ARGS...
  local name=$1 text=$2 rc=0
  shift 2
  timeout 60 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${TINY[@]}" --rounds 1 --output "$WORK/$name.h5" "$@" >"$WORK/$name.out" 2>&1 || rc=$?
  local lines
  lines=$(grep -c '^fedsilo: error' "$WORK/$name.out" || true)
  if [ "$rc" != 2 ] || [ "$lines" != 1 ] || ! grep '^fedsilo: error' "$WORK/$name.out" | grep -qF -- "$text"; then
    fail "$name: exit $rc, $lines error line(s), expected exit 2 and one line naming '$text'"
    cat "$WORK/$name.out" >&2
  elif [ -e "$WORK/$name.h5" ] || [ -e "$WORK/$name.h5.partial" ]; then
    fail "$name: results file left behind"
  else
    log "$name: $(grep '^fedsilo: error' "$WORK/$name.out")"
  fi
}
check_bad level "privacy.level = everyone" --privacy.level everyone
check_bad no_noise "privacy.noise_multiplier" --privacy.level client
check_bad clip "privacy.clip = -1" --privacy.level client --privacy.noise_multiplier 1 --privacy.clip -1
check_bad delta "privacy.delta = 2" --privacy.delta 2
check_bad placement "privacy.noise_placement = cloud" --privacy.noise_placement cloud
check_bad algorithm "algorithm = ditto" --privacy.level client --privacy.noise_multiplier 1 --algorithm ditto
check_bad sample_algorithm "algorithm = qffl" --privacy.level sample --privacy.noise_multiplier 1 --algorithm qffl
check_bad secagg "algorithm = pfedme" --privacy.secure_aggregation true --algorithm pfedme
check_bad target "privacy.target_epsilon = 1e-09" --privacy.level client --privacy.target_epsilon 1e-9 --rounds 100000000
check_bad sample_target "privacy.target_epsilon = 1e-09" --privacy.level sample --privacy.target_epsilon 1e-9 --rounds 100000

# ---- analysis ----------------------------------------------------------------------------------------
eps_csv=$("$FEDSILO_SOURCE_DIR/tools/fedsilo-analysis" summary --format csv "$WORK/eps.h5" 2>&1 | "$PY" -c "
import csv, sys
print(next(csv.DictReader(sys.stdin))['epsilon'])")
"$PY" -c "import sys; sys.exit(0 if abs(float('$eps_csv') - float('$want')) < 1e-4 else 1)" &&
  log "fedsilo-analysis summary: epsilon $eps_csv" || fail "fedsilo-analysis summary shows epsilon '$eps_csv', expected $want"
finish
