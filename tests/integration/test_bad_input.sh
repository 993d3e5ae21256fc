#!/usr/bin/env bash
# label: integration
# timeout: 600
# cost: 155
# Bad input under mpirun -n 2: a one-line error naming the value, the documented exit code, both
# ranks gone within 10 s, and no results file (nor .partial) left behind.
source "$(dirname "$0")/lib/common.sh"
# A corrupt copy of FashionMNIST: train images truncated.
corrupt=$TMP/corrupt
mkdir -p "$corrupt"
for f in train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  gzip -dc "/usr/share/datasets/fashion-mnist/$f.gz" >"$corrupt/$f"
done
gzip -dc /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz >"$corrupt/train-images-idx3-ubyte"
truncate -s 100000 "$corrupt/train-images-idx3-ubyte"

check_case() {  # name expected_code expected_text args...
  local name=$1 code=$2 text=$3
  shift 3
  local out=$TMP/$name.h5 t0 t1 rc=0
  t0=$(date +%s%N)
  timeout 60 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${SMALL[@]}" --output "$out" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
  t1=$(date +%s%N)
  local ms=$(( (t1 - t0) / 1000000 ))
  local lines
  lines=$(grep -c "^fedsilo: error" "$TMP/$name.err" || true)
  if [ "$rc" -ne "$code" ]; then fail "$name: exit code $rc, expected $code"; cat "$TMP/$name.err" >&2; return; fi
  if [ "$lines" -ne 1 ]; then fail "$name: $lines error lines, expected exactly 1"; cat "$TMP/$name.err" >&2; return; fi
  if ! grep "^fedsilo: error" "$TMP/$name.err" | grep -qF -- "$text"; then fail "$name: message does not name '$text'"; cat "$TMP/$name.err" >&2; return; fi
  if grep "^fedsilo: error" "$TMP/$name.err" | LC_ALL=C grep -q '[^ -~]'; then fail "$name: the error line holds unprintable bytes"; return; fi
  if [ "$ms" -gt 10000 ]; then fail "$name: took $ms ms (> 10 s)"; return; fi
  if [ -e "$out" ] || [ -e "$out.partial" ]; then fail "$name: results file left behind"; return; fi
  pass "$name: exit $rc in $ms ms: $(grep '^fedsilo: error' "$TMP/$name.err")"
}

check_case unknown_option 2 "train.lrr" --train.lrr 0.1
check_case unknown_algorithm 2 "fedmagic" --algorithm fedmagic
check_case negative_lr 2 "train.lr = -0.5" --train.lr -0.5
check_case bad_number 2 "abc" --rounds abc
check_case too_many_clients 2 "client" --clients 70000 --partition.samples_per_client 0
check_case missing_data_dir 3 "/nonexistent/fmnist" --data.dir /nonexistent/fmnist
check_case corrupt_idx 3 "train-images-idx3-ubyte" --data.dir "$corrupt"
check_case missing_config 2 "/nonexistent.ini" --config /nonexistent.ini
check_case bad_split 2 "data.split" --data.split 0.5,0.6,0.1
# Client protocol options (optimizer, schedule, initialisation, inputs).
check_case bad_optimizer 2 "train.optimizer = rmsprop" --train.optimizer rmsprop
check_case nesterov_without_momentum 2 "train.nesterov = true needs train.momentum > 0" --train.nesterov true
check_case momentum_with_adam 2 "train.momentum = 0.9 applies to train.optimizer = sgd" --train.optimizer adam --train.momentum 0.9
check_case bad_beta2 2 "train.beta2 = 1" --train.beta2 1
check_case bad_optimizer_state 2 "train.optimizer_state = sometimes" --train.optimizer_state sometimes
check_case bad_lr_schedule 2 "train.lr_schedule = linear" --train.lr_schedule linear
check_case lr_min_above_lr 2 "train.lr_min = 1" --train.lr_schedule cosine --train.lr_min 1
check_case pfedme_with_adam 2 "train.optimizer = adam does not apply" --algorithm pfedme --train.optimizer adam
check_case bad_init_scheme 2 "model.init_scheme = he" --model.init_scheme he
check_case model_init_missing 3 "/nonexistent/model.h5" --model.init /nonexistent/model.h5
echo "not HDF5" >"$TMP/notes.txt"
check_case model_init_not_hdf5 3 "notes.txt: cannot open it as HDF5" --model.init "$TMP/notes.txt"
check_case bad_normalize 2 "data.normalize = zscore" --data.normalize zscore
check_case std_without_mean 2 "data.std = 0.3" --data.normalize mean_std --data.std 0.3
check_case mean_per_channel 2 "data.mean: 2 values given, expected 1 or one per channel (1" --data.normalize mean_std --data.mean 0.1,0.2 --data.std 0.3,0.3
check_case bad_augment 2 "data.augment = mixup" --data.augment mixup
check_case augment_tabular 2 "data.augment = affine needs images" --dataset synthetic --data.augment affine
check_case bad_augment_scale 2 "data.augment_scale = 1.2,0.8" --data.augment affine --data.augment_scale 1.2,0.8
check_case bad_augment_rotation 2 "data.augment_rotation = 200: expected a number in [0, 180]" --data.augment affine --data.augment_rotation 200
check_case bad_augment_translate 2 "data.augment_translate = 1: expected a number in [0, 1)" --data.augment affine --data.augment_translate 1
check_case bad_augment_crop 2 "data.augment_crop_padding = -1: expected an integer in [0," --data.augment affine --data.augment_crop_padding -1
check_case bad_init_bias 2 "model.init_bias = one" --model.init_bias one
check_case bad_lr_step_rounds 2 "train.lr_step_rounds = 0: expected an integer in [1," --train.lr_schedule step --train.lr_step_rounds 0
check_case bad_eps 2 "train.eps = -1" --train.optimizer adam --train.eps -1
check_case bad_weight_decay 2 "train.weight_decay = -0.1" --train.weight_decay -0.1
check_case nesterov_with_adam 2 "train.nesterov" --train.optimizer adam --train.nesterov true
# Options changed where their switch is off (docs/algorithms.md): refused, not ignored.
check_case gamma_without_schedule 2 "train.lr_gamma = 0.5: applies with train.lr_schedule = step or exponential only" --train.lr_gamma 0.5
check_case rotation_without_augment 2 "data.augment_rotation = 30: applies with data.augment = affine only" --data.augment_rotation 30
check_case server_lr_without_optimizer 2 "fl.server_lr = 0.1: applies with a server optimizer" --fl.server_lr 0.1
check_case metric_without_best_val 2 "eval.select_metric = loss: applies with eval.select = best_val only" --eval.select_metric loss
check_case data_limit_too_large 2 "data.limit = 100000" --data.limit 100000
check_case bad_placement 2 "fl.placement = racks" --fl.placement racks
check_case bad_global_shard 2 "gems.global_shard" --algorithm global --rounds 1 --gems.global_shard -1
check_case bad_gems_init 2 "gems.init = random" --algorithm average --rounds 1 --gems.init random
check_case bad_accuracy_floor 2 "alpha_fedavg.accuracy_floor" --algorithm alpha_fedavg --alpha_fedavg.accuracy_floor 1
check_case tiny_accuracy_floor 2 "alpha_fedavg.accuracy_floor" --algorithm alpha_fedavg --alpha_fedavg.accuracy_floor 1e-9
check_case bad_jsonl_bool 2 "output.jsonl = maybe: expected a boolean: true/false, 1/0, yes/no or on/off" --output.jsonl maybe
check_case bad_skip_diverged_bool 2 "fl.skip_diverged = 2: expected a boolean" --fl.skip_diverged 2
check_case negative_progress_seconds 2 "output.progress_seconds = -1: expected a number in [0" --output.progress_seconds -1
check_case text_progress_seconds 2 "soon" --output.progress_seconds soon
check_case one_shot_wrong_rounds 2 "rounds = 3: algorithm = ensemble is one-shot here and needs rounds = 1" \
  --algorithm ensemble --rounds 3
# Configuration files that are not text: refused before parsing, the bytes never echoed raw.
check_case config_dev_zero 2 "config = /dev/zero: byte 0x00 at offset 0 (line 1): not a text INI file" --config /dev/zero
printf 'clients = 4\n\001\002\003binary\n' >"$TMP/binary.ini"
check_case config_binary 2 "binary.ini: byte 0x01 at offset 12 (line 2): not a text INI file" --config "$TMP/binary.ini"
printf 'seed = 1\n\377\376 = 1\n' >"$TMP/high.ini"
check_case config_high_bytes 2 "high.ini:2: unrecognised option '\\xff\\xfe'" --config "$TMP/high.ini"
check_case bad_max_classes 2 "data.max_classes = 1" --data.max_classes 1
# A CSV whose labels reach 4: with data.max_classes = 3 the label is a data error before anything is sized by it.
"$PY" -c "
import sys
with open(sys.argv[1], 'w') as f:
    f.write('a,b,label\n')
    for i in range(400): f.write(f'{i % 7},{i % 3},{i % 5}\n')
" "$TMP/labels.csv"
check_case label_above_max_classes 3 "label 3" --dataset csv --data.file "$TMP/labels.csv" --model logreg --data.max_classes 3
# Protocol options: server optimizers, evaluation rules, FedBABU's head.
check_case bad_server_optimizer 2 "fl.server_optimizer = sgd" --fl.server_optimizer sgd
check_case server_optimizer_for_local 2 "fl.server_optimizer = adam: algorithm = local" --algorithm local --fl.server_optimizer adam
check_case bad_server_tau 2 "fl.server_tau = 0" --fl.server_optimizer yogi --fl.server_tau 0
check_case bad_eval_select 2 "eval.select = best" --eval.select best
check_case best_val_without_validation 2 "eval.select = best_val" --eval.select best_val --data.split 0.8,0,0.2
check_case after_local_one_shot 2 "eval.point = after_local: algorithm = average" --algorithm average --rounds 1 --eval.point after_local
check_case bad_eval_global 2 "eval.global = never: expected one of rounds, end" --eval.global never
check_case unknown_fedbabu_head 2 "no layer block 'fc9'" --algorithm fedbabu --fedbabu.head fc9
check_case fedbabu_head_not_last 2 "the head must be the model's last blocks" --algorithm fedbabu --fedbabu.head fc1
touch "$TMP/a_file"
check_case output_parent_is_a_file 2 "a_file exists and is not a folder" --output "$TMP/a_file/sub/r.h5"
# Robust aggregation and attacks (docs/robustness.md).
check_case bad_aggregator 2 "fl.aggregator = mode" --fl.aggregator mode
check_case bad_trim_fraction 2 "fl.trim_fraction = 0.5" --fl.aggregator trimmed_mean --fl.trim_fraction 0.5
check_case krum_too_few_clients 2 "fl.byzantine = 1" --fl.aggregator krum --fl.byzantine 1
check_case attack_without_silos 2 "attack.kind = sign_flip" --attack.kind sign_flip
check_case attack_ids_out_of_range 2 "attack.client_ids = 0,9" --attack.kind alie --attack.client_ids 0,9
check_case attack_silos_without_kind 2 "attack.kind = none" --attack.clients 2
check_case robust_with_secure_aggregation 2 "privacy.secure_aggregation" --fl.aggregator median \
  --privacy.secure_aggregation true
check_case robust_with_client_dp 2 "privacy.level = client" --attack.kind ipm --attack.clients 1 \
  --privacy.level client --privacy.noise_multiplier 1
check_case robust_algorithm_refused 2 "algorithm = qffl" --algorithm qffl --fl.aggregator geomed
check_case robust_memory_refused 2 "fl.aggregator_memory_mb = 0.001" --fl.aggregator median \
  --fl.aggregator_memory_mb 0.001

# The other side of the same check: missing parent folders of --output are created.
if "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${SMALL[@]}" --rounds 1 --output "$TMP/new/nested/r.h5" >"$TMP/nested.log" 2>&1 \
   && [ -f "$TMP/new/nested/r.h5" ]; then
  pass "missing parent folders of --output are created"
else
  tail -3 "$TMP/nested.log" >&2
  fail "missing parent folders of --output: no results file $TMP/new/nested/r.h5"
fi
# The other side of the configuration checks: a UTF-8 byte-order mark is skipped (seed = 7 is read), and
# a one-shot algorithm without rounds runs its own count (the resolved configuration says rounds = 1).
printf '\357\273\277seed = 7\n' >"$TMP/bom.ini"
NO_ROUNDS=(--clients 4 --model.hidden 16 --partition.samples_per_client 100 --train.batch 16 --eval.batch 100)
if "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${NO_ROUNDS[@]}" --config "$TMP/bom.ini" --algorithm average \
     --gems.local_epochs 2 --output "$TMP/bom.h5" >"$TMP/bom.log" 2>&1 &&
   "$PY" - "$TMP/bom.h5" <<'PYEOF'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    config = f.attrs["config"]
    config = config.decode() if isinstance(config, bytes) else config
    assert int(f.attrs["seed"]) == 7, f"seed {f.attrs['seed']}"
    assert int(f.attrs["num_rounds"]) == 1 and "\nrounds = 1\n" in config, f.attrs["num_rounds"]
    assert f["rounds/round"].shape[0] == 1
PYEOF
then
  pass "a config with a byte-order mark is read; average without rounds runs its 1 round"
else
  tail -3 "$TMP/bom.log" >&2
  fail "byte-order mark / one-shot default rounds: the run failed or its file says otherwise"
fi
finish
