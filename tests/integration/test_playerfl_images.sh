#!/usr/bin/env bash
# label: integration
# timeout: 400
# cost: 142
# configs/playerfl_cifar10.ini and configs/playerfl_emnist.ini as shipped, on small generated files in
# the formats their loaders read (CIFAR-10's binary batches, EMNIST byclass as gzipped IDX;
# tests/integration/lib/image_data.py), passed with --data.dir only:
#   * each config passes --dry-run and sets up its model with the parameter count of the authors'
#     models (CIFAR: 3,963,094; EMNIST byclass, 62 classes: 1,058,010) and its federated layers;
#   * one round of PLayer-FL on each (a few images: --data.limit) gives identical results files at 1
#     and 2 ranks;
#   * EMNIST: data.limit above the generated file's images is a one-line exit 2.
TEST_NAME=test_playerfl_images
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
"$PY" "$FEDSILO_SOURCE_DIR/tests/integration/lib/image_data.py" "$WORK/data" 40 15000 || die "could not generate the data"

# check NAME CONFIG DATA PARAMS SPLIT LIMIT: dry run, then one round at 1 and 2 ranks.
check() {
  local name=$1 cfg=$FEDSILO_SOURCE_DIR/configs/$2 data=$WORK/data/$3 params=$4 split=$5 limit=$6 out
  out=$("$FEDSILO_EXE" --config "$cfg" --data.dir "$data" --overwrite --output "$WORK/$name.h5" --dry-run 2>&1) ||
    { fail "$name: --dry-run: $out"; return; }
  grep -q "model ($params parameters)" <<<"$out" && log "$name: dry run, $params parameters" ||
    fail "$name: expected $params parameters: $(tail -1 <<<"$out")"
  grep -q "$split" <<<"$out" && log "$name: $split" || fail "$name: expected '$split': $out"
  for np in 1 2; do
    "$MPIEXEC" -n "$np" "$FEDSILO_EXE" --config "$cfg" --data.dir "$data" --data.limit "$limit" --rounds 1 \
      --checkpoint.every 0 --output "$WORK/${name}_np$np.h5" >"$WORK/${name}_np$np.log" 2>&1 ||
      fail "$name np=$np: $(tail -2 "$WORK/${name}_np$np.log")"
  done
  h5_same "$WORK/${name}_np1.h5" "$WORK/${name}_np2.h5" && log "$name: identical at 1 and 2 ranks" ||
    fail "$name: results differ across rank counts (above)"
}
check cifar10 playerfl_cifar10.ini cifar10 3963094 "federated conv1, conv2, conv3, conv4, conv5; local fc1, fc2" 60
check emnist playerfl_emnist.ini emnist 1058010 "federated conv1, conv2, conv3, fc1; local fc2" 600

rc=0
out=$("$FEDSILO_EXE" --config "$FEDSILO_SOURCE_DIR/configs/playerfl_emnist.ini" --data.dir "$WORK/data/emnist" \
  --data.limit 15001 --output "$WORK/bad.h5" --dry-run 2>&1) || rc=$?
[ "$rc" = 2 ] && grep -q "data.limit = 15001" <<<"$out" && log "data.limit beyond the file: exit 2" ||
  fail "data.limit 15001: exit $rc: $out"
finish
