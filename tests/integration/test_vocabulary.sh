#!/usr/bin/env bash
# label: integration
# timeout: 300
# /data/vocabulary and the other string datasets are variable-length (docs/results.md): a LEAF text
# dataset whose vocabulary holds one 50 KB token among ~330 short ones gives a results file of a few
# hundred KB (fixed-length strings made it 16 MB: every entry padded to the longest), the token
# reads back exactly, at 1 and 2 ranks alike, and the analysis package still reads the file.
TEST_NAME=test_vocabulary
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
cd "$WORK"

mkdir -p in/train in/test
"$PY" - in <<'EOF'
import json, sys
d, token = sys.argv[1], "w" * 51200
def user(n, k):
    # two new words per sample (a vocabulary of ~330 tokens) and, once, the long token
    xs = [["id", "d", "q", "u", (token if (k == 0 and i == 0) else f"a{k}x{i} b{k}x{i}") + " hello"] for i in range(n)]
    return {"x": xs, "y": [i % 2 for i in range(n)]}
users = [f"u{k}" for k in range(4)]
for split, n in (("train", 40), ("test", 10)):
    json.dump({"users": users, "num_samples": [n] * 4, "user_data": {u: user(n, k) for k, u in enumerate(users)}},
              open(f"{d}/{split}/a.json", "w"))
EOF
ARGS=(--dataset leaf --data.dir in --clients 4 --model lstm --rounds 1 --partition.scheme natural)
for np in 1 2; do
  "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "${ARGS[@]}" --output "v$np.h5" >"v$np.log" 2>&1 || die "$np ranks: $(tail -3 "v$np.log")"
done
kb=$(du -k v1.h5 | cut -f1)
log "results file with a 50 KB token in the vocabulary: $kb KB"
((kb < 1024)) || fail "the results file is $kb KB (fixed-length strings?)"
"$PY" - v1.h5 <<'EOF' || fail "/data/vocabulary does not read back as variable-length strings holding the token"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    for name in ("data/vocabulary", "model/layers/name", "sensitivity/layers"):
        info = h5py.check_string_dtype(f[name].dtype)
        assert info is not None and info.length is None, name + " is not variable-length"
    vocab = [v.decode() for v in f["data/vocabulary"][()]]
assert vocab[:2] == ["<pad>", "<unk>"], vocab[:2]
assert "w" * 51200 in vocab, "the 50 KB token is missing"
assert 300 < len(vocab) < 400, len(vocab)
EOF
h5_same v1.h5 v2.h5 || fail "2 ranks give another file than 1"
(cd "$FEDSILO_SOURCE_DIR" && "$PY" -m analysis summary "$WORK/v1.h5") >summary.log 2>&1 ||
  fail "analysis summary cannot read the file: $(tail -3 summary.log)"
finish
