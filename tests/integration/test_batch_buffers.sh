#!/usr/bin/env bash
# label: integration
# timeout: 300
# Training buffers follow min(train.batch, the largest client's training set), not train.batch: on
# 200-sample clients, train.batch 100000 must have the peak memory of train.batch 200 (within 15% +
# 16 MB; before, 1 GB against 83 MB) and give the same results as train.batch 200, because a batch
# larger than a client's data is the whole set. Also at 2 ranks (the same results as at 1).
TEST_NAME=test_batch_buffers
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
cd "$WORK"

ARGS=(--dataset fashion_mnist --partition.samples_per_client 250 --data.split 0.8,0,0.2 --clients 4 --model.hidden 32
      --rounds 3 --seed 4)
# peak KB (VmHWM of the one process: no mpirun, MPI's singleton mode)
for b in 200 100000; do
  /usr/bin/time -f '%M' -o "rss_$b" "$FEDSILO_EXE" "${ARGS[@]}" --train.batch "$b" --output "b$b.h5" >"b$b.log" 2>&1 ||
    die "train.batch $b failed: $(tail -3 "b$b.log")"
done
small=$(tail -1 rss_200)
big=$(tail -1 rss_100000)
log "peak RSS: train.batch 200: $((small / 1024)) MB, train.batch 100000: $((big / 1024)) MB"
((big <= small * 115 / 100 + 16384)) || fail "train.batch 100000 peaked at $((big / 1024)) MB against $((small / 1024)) MB at 200"
h5_same b200.h5 b100000.h5 || fail "train.batch 100000 gives other results than train.batch 200 on 200-sample clients"
"$PY" - b200.h5 <<'EOF' || fail "the clients do not have 200 training samples each (the case is not tested)"
import sys, h5py
n = h5py.File(sys.argv[1], "r")["clients/num_train"][:]
sys.exit(0 if (n == 200).all() else 1)
EOF
"$MPIEXEC" -n 2 "$FEDSILO_EXE" "${ARGS[@]}" --train.batch 100000 --output np2.h5 >np2.log 2>&1 || die "2 ranks: $(tail -3 np2.log)"
h5_same b100000.h5 np2.h5 || fail "train.batch 100000: 2 ranks differ from 1"
finish
