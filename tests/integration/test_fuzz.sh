#!/usr/bin/env bash
# label: integration
# timeout: 900
# cost: 100
# Malformed input, fed to the real executable: more than 30 bad configurations (wrong types, out of
# range or huge values, unknown and duplicated keys, broken INI lines, random bytes, a zero-byte
# file, a directory as the config file, bad command lines), bad data files (missing, empty or
# truncated IDX files, bad magic, image/label mismatch, broken, mistyped or mis-sized partition.file
# .npy files, bad CSV) and bad HDF5 inputs (alpha_fedavg.reference files that are missing, empty,
# text, truncated, not fedsilo's, mis-typed or mis-shaped; --resume checkpoints that are empty, text,
# truncated, a results file, not fedsilo's or missing an array). Each must exit with its documented
# code (2 configuration, 3 data, 1 an unreadable checkpoint) and print exactly one "fedsilo: error:"
# line that names the bad value, key or file. Every case runs under `timeout`, so an input that is
# wrongly accepted fails here instead of training for minutes.
TEST_NAME=test_fuzz
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
FMNIST=${FEDSILO_FMNIST_DIR:-/usr/share/datasets/fashion-mnist}
[ -f "$FMNIST/train-images-idx3-ubyte.gz" ] || die "FashionMNIST not found in $FMNIST (apt-get install dataset-fashion-mnist)"
cd "$WORK"
NCASES=0

# ini KEY VALUE [KEY VALUE ...]: a small valid configuration with these keys set (section.key) or,
# with VALUE "@drop", removed. Printed to stdout.
ini() {
  "$PY" - "$@" <<'PYEOF'
import sys
cfg = {"algorithm": "fedavg", "dataset": "fashion_mnist", "model": "mlp", "clients": "4", "rounds": "1",
       "model.hidden": "8", "partition.samples_per_client": "50"}
a = sys.argv[1:]
for k, v in zip(a[::2], a[1::2]):
    if v == "@drop": cfg.pop(k, None)
    else: cfg[k] = v
top = [f"{k} = {v}" for k, v in cfg.items() if "." not in k]
secs = {}
for k, v in cfg.items():
    if "." in k:
        s, key = k.split(".", 1)
        secs.setdefault(s, []).append(f"{key} = {v}")
out = top + [l for s, ls in secs.items() for l in [f"[{s}]"] + ls]
print("\n".join(out))
PYEOF
}

# expect NAME CODE PATTERN [--no-output] ARGS...: runs fedsilo ARGS --output ... (one process, no
# mpirun) and checks the exit code, that exactly one error line is printed, and that it matches
# PATTERN (grep -E).
expect() {
  local name=$1 want=$2 pattern=$3
  shift 3
  NCASES=$((NCASES + 1))
  local rc=0 out=(--output "$WORK/out-$name.h5")
  if [ "${1:-}" = --no-output ]; then  # the case sets output itself (the command line would win)
    out=()
    shift
  fi
  timeout 120 "$FEDSILO_EXE" "$@" "${out[@]}" >"$WORK/$name.log" 2>&1 || rc=$?
  local errs n
  errs=$(grep -a '^fedsilo: error:' "$WORK/$name.log" || true)
  n=$(printf '%s' "$errs" | grep -c . || true)
  if [ "$rc" = 124 ]; then
    fail "$name: still running after 120 s (the bad input was accepted)"
  elif [ "$rc" != "$want" ]; then
    fail "$name: exit code $rc, expected $want: $(grep -a -m1 -i error "$WORK/$name.log" || tail -1 "$WORK/$name.log")"
  elif [ "$n" != 1 ]; then
    fail "$name: $n error lines, expected 1"
  elif ! printf '%s\n' "$errs" | grep -aqE -- "$pattern"; then
    fail "$name: message does not name the bad input (/$pattern/): $errs"
  else
    log "ok $name ($rc): ${errs#fedsilo: error: }"
  fi
  [ ! -e "$WORK/out-$name.h5" ] && [ ! -e "$WORK/out-$name.h5.partial" ] || fail "$name: a results file was left"
}

# cfgcase NAME PATTERN KEY VALUE ...: configuration error (exit 2) from one bad key.
cfgcase() {
  local name=$1 pattern=$2
  shift 2
  ini "$@" >"$WORK/$name.ini"
  expect "$name" 2 "$pattern" --config "$WORK/$name.ini"
}
# rawcase NAME PATTERN pre|post TEXT: configuration error (exit 2) from TEXT (printf format) put
# before or after a valid configuration.
rawcase() {
  local name=$1 pattern=$2 where=$3
  # shellcheck disable=SC2059
  if [ "$where" = pre ]; then { printf "$4"; ini; } else { ini; printf "$4"; }; fi >"$WORK/$name.ini"
  expect "$name" 2 "$pattern" --config "$WORK/$name.ini"
}

# ---- configuration (exit 2) -----------------------------------------------------------------------
cfgcase clients-zero 'clients = 0' clients 0
cfgcase clients-negative 'clients = -3' clients -3
cfgcase clients-text "clients.*'abc'" clients abc
cfgcase clients-float "clients.*'1e3'" clients 1e3
cfgcase clients-huge "clients.*99999999999999999999" clients 99999999999999999999
cfgcase clients-empty "clients.*''" clients ''
cfgcase rounds-zero 'rounds = 0' rounds 0
cfgcase lr-negative 'train.lr = -1' train.lr -1
cfgcase lr-nan 'train.lr = nan' train.lr nan
cfgcase lr-overflow "train.lr.*1e400" train.lr 1e400
cfgcase lr-huge 'train.lr = 1e300' train.lr 1e300
cfgcase batch-zero 'train.batch = 0' train.batch 0
cfgcase momentum-one 'train.momentum = 1.5' train.momentum 1.5
cfgcase scheme-unknown 'partition.scheme = bogus' partition.scheme bogus
cfgcase alpha-zero 'partition.alpha = 0' partition.alpha 0
cfgcase split-two 'data.split = 0.5,0.5' data.split 0.5,0.5
cfgcase split-negative 'data.split = 0.9,0.9,-0.8' data.split 0.9,0.9,-0.8
cfgcase model-unknown 'model = transformer' model transformer
cfgcase hidden-zero 'model.hidden = 0' model.hidden 0
cfgcase hidden-hole "model.hidden" model.hidden 32,,32
cfgcase algorithm-unknown 'algorithm = fedsgd' algorithm fedsgd
cfgcase unknown-key "unrecognised option 'foo'" foo 1
cfgcase unknown-section-key "unrecognised option 'train.lrr'" train.lrr 0.1
cfgcase dropout-one 'fl.dropout = 1' fl.dropout 1
cfgcase eval-every-zero 'eval.every = 0' eval.every 0
cfgcase seed-negative 'seed = -1' seed -1
cfgcase checkpoint-negative 'checkpoint.every = -2' checkpoint.every -2
cfgcase bool-maybe 'fl.skip_diverged = maybe' fl.skip_diverged maybe
cfgcase file-scheme-no-file 'partition.scheme = file needs partition.file' partition.scheme file
cfgcase fedprox-mu-text "fedprox.mu" algorithm fedprox fedprox.mu abc
ini output '' >"$WORK/output-empty.ini"
expect output-empty 2 "output" --no-output --config "$WORK/output-empty.ini"
rawcase duplicate-key "option 'clients' cannot be specified more than once" pre 'clients = 5\n'
rawcase line-without-equals "invalid line 'clients 4'" pre 'clients 4\n'
rawcase truncated-file "invalid line 'l'" post '[train]\nl'
rawcase broken-section "invalid line '\\[train'" post '[train\nlr = 0.1\n'
head -c 400 /dev/urandom >"$WORK/garbage.ini"
expect random-bytes 2 'config|invalid|unrecognised|option' --config "$WORK/garbage.ini"
expect config-missing 2 "config = /nonexistent/fedsilo.ini" --config /nonexistent/fedsilo.ini
mkdir -p "$WORK/a-directory.ini"
# (tiny settings on the command line: if the directory is wrongly taken as an empty configuration,
# the run is short and the case fails fast)
expect config-is-directory 2 "a-directory.ini" --config "$WORK/a-directory.ini" --rounds 1 --clients 2 \
  --partition.samples_per_client 20 --model.hidden 4
# A zero-byte configuration file (a failed or interrupted write) is refused, not run as all defaults
# (tiny settings on the command line again, so that a wrong acceptance fails fast).
: >"$WORK/zero-bytes.ini"
expect config-zero-bytes 2 "zero-bytes.ini" --config "$WORK/zero-bytes.ini" --rounds 1 --clients 2 \
  --partition.samples_per_client 20 --model.hidden 4
expect cli-unknown 2 "unrecognised option 'bogus'" --config "$WORK/clients-zero.ini" --bogus 1
expect cli-missing-value 2 "'--clients' is missing" --no-output --clients

# ---- data (exit 3) ----------------------------------------------------------------------------------
GOOD="$WORK/good.ini"
ini >"$GOOD"
datacase() {  # NAME PATTERN ARGS...
  local name=$1 pattern=$2
  shift 2
  expect "$name" 3 "$pattern" --config "$GOOD" "$@"
}
fm() {  # a copy of the FashionMNIST directory to break
  local d="$WORK/fm-$1"
  mkdir -p "$d"
  cp "$FMNIST"/*-idx?-ubyte.gz "$d/"
  echo "$d"
}
datacase dir-missing "/nonexistent/fmnist" --data.dir /nonexistent/fmnist
mkdir -p "$WORK/empty-dir"
datacase dir-empty "empty-dir" --data.dir "$WORK/empty-dir"
d=$(fm gz-truncated)
head -c 100000 "$FMNIST/train-images-idx3-ubyte.gz" >"$d/train-images-idx3-ubyte.gz"
datacase idx-gz-truncated "train-images-idx3-ubyte.gz" --data.dir "$d"
d=$(fm raw-truncated)
rm "$d/train-images-idx3-ubyte.gz"
{ gzip -dc "$FMNIST/train-images-idx3-ubyte.gz" || true; } | head -c 1000000 >"$d/train-images-idx3-ubyte"
datacase idx-truncated "train-images-idx3-ubyte.*truncated" --data.dir "$d"
d=$(fm empty-file)
rm "$d/train-labels-idx1-ubyte.gz"
: >"$d/train-labels-idx1-ubyte"
datacase idx-empty "train-labels-idx1-ubyte" --data.dir "$d"
d=$(fm bad-magic)
rm "$d/train-labels-idx1-ubyte.gz"
printf '\x12\x34\x08\x01\x00\x00\xea\x60' >"$d/train-labels-idx1-ubyte"
datacase idx-bad-magic "train-labels-idx1-ubyte.*magic" --data.dir "$d"
d=$(fm mismatch)
cp "$FMNIST/t10k-labels-idx1-ubyte.gz" "$d/train-labels-idx1-ubyte.gz"
datacase idx-count-mismatch "mismatch" --data.dir "$d"
d=$(fm huge-dims)
rm "$d/train-labels-idx1-ubyte.gz"
printf '\x00\x00\x08\x01\xff\xff\xff\xff' >"$d/train-labels-idx1-ubyte"
datacase idx-huge-dims "train-labels-idx1-ubyte" --data.dir "$d"

# partition.file: the training set has 60000 samples, 4 clients.
"$PY" - "$WORK" <<'PYEOF'
import sys, numpy as np
w = sys.argv[1]
n = 60000
np.save(f"{w}/ok.npy", np.arange(n, dtype=np.int64) % 4)
np.save(f"{w}/short.npy", np.arange(n - 7, dtype=np.int64) % 4)
bad = np.arange(n, dtype=np.int64) % 4; bad[123] = 9
np.save(f"{w}/outside.npy", bad)
neg = np.arange(n, dtype=np.int64) % 4; neg[5] = -1
np.save(f"{w}/negative.npy", neg)
np.save(f"{w}/floats.npy", (np.arange(n) % 4).astype(np.float64))
np.save(f"{w}/twod.npy", (np.arange(n, dtype=np.int64) % 4).reshape(-1, 2))
raw = open(f"{w}/ok.npy", "rb").read()
open(f"{w}/truncated.npy", "wb").write(raw[: len(raw) // 2])
open(f"{w}/header-only.npy", "wb").write(raw[:10])
open(f"{w}/garbage.npy", "wb").write(b"this is not a numpy file\n" * 10)
open(f"{w}/empty.npy", "wb").close()
PYEOF
P=(--partition.scheme file)
datacase npy-missing "nope.npy" "${P[@]}" --partition.file "$WORK/nope.npy"
datacase npy-empty "empty.npy" "${P[@]}" --partition.file "$WORK/empty.npy"
datacase npy-garbage "garbage.npy.*not a .npy" "${P[@]}" --partition.file "$WORK/garbage.npy"
datacase npy-truncated "truncated.npy" "${P[@]}" --partition.file "$WORK/truncated.npy"
datacase npy-header-only "header-only.npy.*truncated" "${P[@]}" --partition.file "$WORK/header-only.npy"
datacase npy-short "short.npy.*59993 client ids" "${P[@]}" --partition.file "$WORK/short.npy"
datacase npy-outside "outside.npy.*client id 9" "${P[@]}" --partition.file "$WORK/outside.npy"
datacase npy-negative "negative.npy.*client id -1" "${P[@]}" --partition.file "$WORK/negative.npy"
datacase npy-floats "floats.npy" "${P[@]}" --partition.file "$WORK/floats.npy"
datacase npy-2d "twod.npy.*1-D" "${P[@]}" --partition.file "$WORK/twod.npy"

# CSV dataset
printf 'x1,x2,label\n1,2,0\n3,4,1\n5,6,0\n7,8,1\n' >"$WORK/ok.csv"
: >"$WORK/empty.csv"
printf 'x1,x2,label\n1,2,0\n3,abc,1\n5,6,0\n7,8,1\n' >"$WORK/text.csv"
printf 'x1,x2,label\n1,2,0\n3,4\n5,6,0\n7,8,1\n' >"$WORK/ragged.csv"
printf 'x1,x2,y\n1,2,0\n3,4,1\n' >"$WORK/nolabel.csv"
printf 'x1,x2,label\n1,"2,0\n' >"$WORK/quote.csv"
C=(--dataset csv --clients 2 --partition.scheme iid --partition.samples_per_client 0)
datacase csv-missing "nope.csv" "${C[@]}" --data.file "$WORK/nope.csv"
datacase csv-empty "empty.csv" "${C[@]}" --data.file "$WORK/empty.csv"
datacase csv-text "text.csv.*abc|abc.*text.csv" "${C[@]}" --data.file "$WORK/text.csv"
datacase csv-ragged "ragged.csv" "${C[@]}" --data.file "$WORK/ragged.csv"
datacase csv-no-label "nolabel.csv.*label" "${C[@]}" --data.file "$WORK/nolabel.csv"
datacase csv-open-quote "quote.csv.*quote" "${C[@]}" --data.file "$WORK/quote.csv"

# ---- HDF5 inputs: alpha_fedavg.reference (a configuration value, exit 2) and --resume checkpoints
# (exit 1: an unreadable checkpoint is an HDF5 error, docs/hpc.md). The real files to break: a finished
# results file, and a checkpoint left by a 4-round run stopped with SIGTERM after its first round.
"$FEDSILO_EXE" --config "$GOOD" --output "$WORK/good.h5" >"$WORK/good.log" 2>&1 ||
  die "the valid configuration failed: $(tail -3 "$WORK/good.log")"
FEDSILO_FAULT=slow:rank=0,ms=300 "$FEDSILO_EXE" --config "$GOOD" --rounds 4 --output "$WORK/ck.h5" >"$WORK/ck.log" 2>&1 &
pid=$!
wait_for_line 'round +global_acc' "$WORK/ck.log" 120 "$pid" && kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 75 ] && [ -f "$WORK/ck.h5.ckpt" ] || die "no checkpoint to break (the stopped run exited $rc): $(tail -3 "$WORK/ck.log")"
"$PY" - "$WORK" <<'PYEOF'
import sys, shutil, h5py, numpy as np
w = sys.argv[1]
for src, dst in (("good.h5", "ref-truncated.h5"), ("ck.h5.ckpt", "truncated.ckpt")):
    raw = open(f"{w}/{src}", "rb").read()
    open(f"{w}/{dst}", "wb").write(raw[: len(raw) // 2])
open(f"{w}/text.h5", "w").write("this is not an HDF5 file\n" * 20)
open(f"{w}/zero.h5", "wb").close()
with h5py.File(f"{w}/foreign.h5", "w") as f:  # valid HDF5, not written by fedsilo
    f["data"] = np.arange(10.0)
with h5py.File(f"{w}/twod.h5", "w") as f:
    f["summary/client_accuracy"] = np.full((4, 2), 0.5)
    f["clients/num_train"] = np.ones(4)
with h5py.File(f"{w}/strings.h5", "w") as f:  # accuracies stored as strings
    f["summary/client_accuracy"] = np.array([b"0.5", b"0.6", b"0.7", b"0.8"])
    f["clients/num_train"] = np.ones(4)
with h5py.File(f"{w}/count.h5", "w") as f:
    f["summary/client_accuracy"] = np.full(4, 0.5)
    f["clients/num_train"] = np.ones(3)
shutil.copy(f"{w}/ck.h5.ckpt", f"{w}/no-array.ckpt")
with h5py.File(f"{w}/no-array.ckpt", "a") as f:
    del f["replicated/driver/global"]  # the global model
# Edited round counters (the stopped run finished 1 round: next_round = rows = 1).
for name, attrs in (("past-end", {"next_round": 1000, "rows": 1000}), ("negative", {"next_round": -3, "rows": -3}),
                    ("rows-disagree", {"rows": 7}), ("rows-missing", {"next_round": 3, "rows": 3})):
    shutil.copy(f"{w}/ck.h5.ckpt", f"{w}/{name}.ckpt")
    with h5py.File(f"{w}/{name}.ckpt", "a") as f:
        for k, v in attrs.items():
            f.attrs[k] = np.int64(v)
shutil.copy(f"{w}/ck.h5.ckpt", f"{w}/string-round.ckpt")
with h5py.File(f"{w}/string-round.ckpt", "a") as f:
    f.attrs["next_round"] = np.bytes_("1")
PYEOF
refcase() {  # NAME PATTERN FILE: alpha_fedavg with FILE as its FedAvg reference
  expect "$1" 2 "$2" --config "$GOOD" --algorithm alpha_fedavg --alpha_fedavg.reference "$3"
}
refcase ref-missing "nope.h5: cannot open" "$WORK/nope.h5"
refcase ref-zero-bytes "zero.h5: cannot open" "$WORK/zero.h5"
refcase ref-text "text.h5: cannot open" "$WORK/text.h5"
refcase ref-truncated "ref-truncated.h5: cannot open" "$WORK/ref-truncated.h5"
refcase ref-not-fedsilo "foreign.h5: no dataset /summary/client_accuracy" "$WORK/foreign.h5"
refcase ref-2d "twod.h5: /summary/client_accuracy has 2 dimensions" "$WORK/twod.h5"
refcase ref-strings "strings.h5.*client_accuracy" "$WORK/strings.h5"
refcase ref-count-mismatch "count.h5: 4 accuracies for 3 clients" "$WORK/count.h5"
ckptcase() {  # NAME PATTERN FILE: --resume with FILE as the run's <output>.ckpt; FILE is left as it was
  local name=$1 pattern=$2 src=$3
  cp "$src" "$WORK/out-$name.h5.ckpt"
  expect "$name" 1 "$pattern" --config "$GOOD" --rounds 4 --resume
  cmp -s "$src" "$WORK/out-$name.h5.ckpt" || fail "$name: the checkpoint was changed or removed"
}
ckptcase ckpt-zero-bytes "out-ckpt-zero-bytes.h5.ckpt \(not an HDF5 file" "$WORK/zero.h5"
ckptcase ckpt-text "out-ckpt-text.h5.ckpt \(not an HDF5 file" "$WORK/text.h5"
ckptcase ckpt-truncated "out-ckpt-truncated.h5.ckpt \(not an HDF5 file" "$WORK/truncated.ckpt"
ckptcase ckpt-results-file "out-ckpt-results-file.h5.ckpt is not a fedsilo checkpoint \(its format is 'fedsilo-results-1'\)" "$WORK/good.h5"
ckptcase ckpt-not-fedsilo "out-ckpt-not-fedsilo.h5.ckpt: attribute 'format' missing" "$WORK/foreign.h5"
ckptcase ckpt-no-array "out-ckpt-no-array.h5.ckpt has no array 'driver/global'" "$WORK/no-array.ckpt"
# Edited attributes or arrays no longer match the checkpoint's checksums: refused as damaged, before
# their values are read (the value checks behind the checksum stay for files written by other tools).
DAMAGED="its attributes do not match their checksum|does not match its checksum"
ckptcase ckpt-past-end "out-ckpt-past-end.h5.ckpt: ($DAMAGED)" "$WORK/past-end.ckpt"
ckptcase ckpt-negative-round "out-ckpt-negative-round.h5.ckpt: ($DAMAGED)" "$WORK/negative.ckpt"
ckptcase ckpt-rows-disagree "out-ckpt-rows-disagree.h5.ckpt: ($DAMAGED)" "$WORK/rows-disagree.ckpt"
ckptcase ckpt-rows-missing "out-ckpt-rows-missing.h5.ckpt: ($DAMAGED)" "$WORK/rows-missing.ckpt"
ckptcase ckpt-string-round "out-ckpt-string-round.h5.ckpt: attribute 'next_round' is not an integer scalar" \
  "$WORK/string-round.ckpt"

log "$NCASES cases"
((NCASES >= 30)) || fail "only $NCASES cases"
finish
