#!/usr/bin/env bash
# label: integration
# timeout: 120
# The stored W1/W2 partition (data/partitions/fmnist_c10_dirichlet0.5_seed0.npy) is what its README
# says it is: data/partitions/draw_partition.py, run as the README gives it (Debian's FashionMNIST
# labels, 10 clients, alpha 0.5, seed 0), draws the same 60,000 client ids, and their raw bytes have
# the sha256 the README records. fedsilo reads the file through partition.scheme = file (the unit
# tests Partition.Shipped*); configs/w1_fedavg_fmnist.ini names it by a path that exists.
TEST_NAME=test_partition_file
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
D=$FEDSILO_SOURCE_DIR/data/partitions
STORED=$D/fmnist_c10_dirichlet0.5_seed0.npy
[ -f "$STORED" ] || die "$STORED is missing"
[ -f /usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz ] ||
  die "FashionMNIST is missing (apt-get install dataset-fashion-mnist; jobs/setup.sh installs it)"

"$PY" "$D/draw_partition.py" --out "$WORK/redrawn.npy" >"$WORK/draw.log" 2>&1 ||
  die "draw_partition.py failed: $(tail -3 "$WORK/draw.log")"
want_sha=$(grep -o 'sha256 of the 60,000 ids as raw bytes: `[0-9a-f]*`' "$D/README.md" | grep -o '[0-9a-f]\{64\}')
[ -n "$want_sha" ] || fail "data/partitions/README.md records no sha256 of the raw ids"
"$PY" - "$STORED" "$WORK/redrawn.npy" "$want_sha" <<'PYEOF' || fail "stored and redrawn partitions (above)"
import hashlib, sys
import numpy as np
stored, redrawn = np.load(sys.argv[1]), np.load(sys.argv[2])
assert stored.dtype == np.uint8 and stored.shape == (60000,), f"stored: {stored.dtype} {stored.shape}"
assert np.array_equal(stored, redrawn), f"{int((stored != redrawn).sum())} of 60000 ids differ from the redrawn ones"
sha = hashlib.sha256(stored.tobytes()).hexdigest()
assert sha == sys.argv[3], f"raw ids sha256 {sha}, README says {sys.argv[3]}"
PYEOF
log "draw_partition.py redraws the stored partition id for id; sha256 as recorded"

# The W1 config points at the stored file, by a path relative to the repository root.
cfg_file=$(sed -n 's/^file *= *//p' "$FEDSILO_SOURCE_DIR/configs/w1_fedavg_fmnist.ini")
[ "$cfg_file" = data/partitions/fmnist_c10_dirichlet0.5_seed0.npy ] ||
  fail "configs/w1_fedavg_fmnist.ini: partition file '$cfg_file'," \
    "expected data/partitions/fmnist_c10_dirichlet0.5_seed0.npy"
finish
