#!/usr/bin/env bash
# label: integration
# timeout: 120
# Durable publication: the checkpoint (<output>.ckpt.tmp -> <output>.ckpt) and the results file
# (<output>.partial -> <output>) are fsynced before their atomic rename, and the directory after it.
# Watched with strace on a 2-rank run that checkpoints every round. Needs strace (and ptrace
# permission); without them the test says SKIPPED and passes.
source "$(dirname "$0")/lib/common.sh"
if ! command -v strace >/dev/null || ! strace -f -qq -o /dev/null true 2>/dev/null; then
  echo "SKIPPED: strace is not available or not permitted here"
  exit 0
fi
out=$TMP/run.h5
strace -f -qq -e trace=openat,fsync,fdatasync,rename,renameat,renameat2 -o "$TMP/trace" \
  "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${SMALL[@]}" --rounds 3 --checkpoint.every 1 --output "$out" >"$TMP/log" 2>&1 \
  || { cat "$TMP/log"; fail "run failed"; finish; }
[ -f "$out" ] && pass "results file written" || fail "no results file"
"$PY" - "$TMP/trace" "$out" <<'PYEOF' || fail "a file was renamed without an fsync of its data first (above)"
import re, sys
trace, out = sys.argv[1], sys.argv[2]
# Per process, in order: fds opened on a path, fds fsynced since, renames.
opened, synced, published, bad = {}, {}, [], []
dirsync = {}
pending = {}  # pid -> (src, dst) of the last rename, waiting for the directory fsync
for line in open(trace):
    m = re.match(r"(\d+) +(\w+)\((.*)\) += (-?\d+)", line)
    if not m:
        continue
    pid, call, args, rc = m.group(1), m.group(2), m.group(3), int(m.group(4))
    if call == "openat" and rc >= 0:
        path = re.search(r'"([^"]*)"', args).group(1)
        opened.setdefault(pid, {})[rc] = path
        synced.setdefault(pid, set()).discard(path)
    elif call in ("fsync", "fdatasync") and rc == 0:
        path = opened.get(pid, {}).get(int(args.split(",")[0]))
        if path:
            synced.setdefault(pid, set()).add(path)
            if pid in pending and path == pending[pid][2]:
                dirsync[pending.pop(pid)[:2]] = True
    elif call.startswith("rename") and rc == 0:
        src, dst = re.findall(r'"([^"]*)"', args)[:2]
        if src.endswith(".ckpt.tmp") or src.endswith(".partial"):
            published.append((src, dst))
            if src not in synced.get(pid, set()):
                bad.append(f"rename {src} -> {dst} without an fsync of {src} before it")
            pending[pid] = (src, dst, dst.rsplit("/", 1)[0])
ckpts = [p for p in published if p[0].endswith(".ckpt.tmp")]
finals = [p for p in published if p[0] == out + ".partial" and p[1] == out]
if len(ckpts) < 2:
    bad.append(f"expected checkpoint renames (checkpoint.every 1), saw {ckpts}")
if len(finals) != 1:
    bad.append(f"expected one rename of {out}.partial to {out}, saw {finals}")
for p in published:
    if not dirsync.get(p):
        bad.append(f"no fsync of the directory after rename {p[0]} -> {p[1]}")
for b in bad:
    print("   ", b)
print(f"{len(ckpts)} checkpoint and {len(finals)} results renames, each after an fsync of the file")
sys.exit(1 if bad else 0)
PYEOF
finish
