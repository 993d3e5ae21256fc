#!/usr/bin/env bash
# label: integration
# timeout: 900
# cost: 49
# What a run shows while it runs, from the real executable under mpirun:
#  * the start-up line counts in singular and plural ("1 client on 1 rank, 1 round");
#  * each round line ends with the run's ETA; a progress line within a round (phase, clients done of
#    all, samples/s) when output.progress_seconds allows it, none when it is 0;
#  * decisions printed once (rank 0) as they are made: PLayer-FL's split at 2 ranks;
#  * --quiet: nothing on standard output or standard error (the same run without it warns), a complete
#    results file; a failing run still prints its error line;
#  * output.jsonl: one JSON object per round (python's json module reads every line), figures equal to
#    the results file's /rounds, NaN as null; the same content at 1, 2 and 4 ranks but the timing
#    fields; whole lines only while the run writes it; a run killed after a checkpoint and resumed
#    (with a torn line appended meanwhile) ends with every round exactly once, as the uninterrupted run.
TEST_NAME=test_run_output
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
RUN=("${TINY[@]}" --seed 3)

# run_to LOG NP ARGS...: sets RC.
run_to() {
  local logf=$1 np=$2
  shift 2
  RC=0
  "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "$@" >"$logf" 2>"$logf.err" || RC=$?
}

# ---- start-up line, ETA column, progress lines -------------------------------------------------------
run_to "$WORK/one.log" 1 "${RUN[@]}" --clients 1 --rounds 1 --output "$WORK/one.h5"
if [ "$RC" != 0 ]; then
  fail "1 client, 1 round: exit $RC"
  cat "$WORK/one.log.err" >&2
elif grep -q ', 1 client on 1 rank, 1 round$' "$WORK/one.log"; then
  log "ok: singular start-up line: $(head -1 "$WORK/one.log")"
else
  fail "start-up line not in the singular: $(head -1 "$WORK/one.log")"
fi
run_to "$WORK/prog.log" 2 "${RUN[@]}" --rounds 3 --output.progress_seconds 1e-9 --output "$WORK/prog.h5"
[ "$RC" = 0 ] || fail "progress run: exit $RC"
grep -q ', 4 clients on 2 ranks, 3 rounds$' "$WORK/prog.log" || fail "plural start-up line: $(head -1 "$WORK/prog.log")"
grep -qE '^ +round +global_acc +client_acc +worst10 +train_s +round_s +eta$' "$WORK/prog.log" ||
  fail "round header without the eta column"
n_eta=$(grep -cE '^ +[0-9]+ .* [0-9]+:[0-9]{2}:[0-9]{2}$' "$WORK/prog.log" || true)
[ "$n_eta" = 3 ] && log "ok: 3 round lines end with an h:mm:ss ETA" || fail "$n_eta round lines with an ETA, expected 3"
grep -qE '^ +2 .* 0:00:00$' "$WORK/prog.log" || fail "the last round's ETA is not 0:00:00"
# Rank 0 holds 2 of the 4 clients: after its first, the line estimates 2 of 4 and names its share.
grep -qE '^progress: round 0, training: ~2/4 clients \(rank 0: 1/2\), ~[0-9]+ samples/s, [0-9]+:[0-9]{2}:[0-9]{2} so far$' \
  "$WORK/prog.log" && log "ok: training progress line" || fail "no training progress line in round 0"
grep -qE '^progress: round 2, evaluating: ~2/4 clients' "$WORK/prog.log" || fail "no evaluation progress line"
grep -qE '^progress: final evaluation: ' "$WORK/prog.log" || fail "no progress line for the final evaluation"
run_to "$WORK/noprog.log" 2 "${RUN[@]}" --rounds 3 --output.progress_seconds 0 --output "$WORK/noprog.h5"
[ "$RC" = 0 ] && ! grep -q '^progress:' "$WORK/noprog.log" && log "ok: output.progress_seconds = 0 prints no progress" ||
  fail "output.progress_seconds = 0: progress printed or the run failed ($RC)"

# ---- decisions -----------------------------------------------------------------------------------------
run_to "$WORK/pfl.log" 2 "${RUN[@]}" --rounds 2 --algorithm playerfl --model.hidden 16,16 --output "$WORK/pfl.h5"
n=$(grep -c '^playerfl: round 0: split layer [0-9] of 3 (fc[0-9]): federated ' "$WORK/pfl.log" || true)
if [ "$RC" = 0 ] && [ "$n" = 1 ]; then
  split=$("$PY" -c "import h5py,sys; print(int(h5py.File(sys.argv[1])['playerfl/split_layer'][()]))" "$WORK/pfl.h5")
  grep -q "^playerfl: round 0: split layer $split of 3" "$WORK/pfl.log" &&
    log "ok: the split decision, printed once at 2 ranks, names the recorded split $split" ||
    fail "the announced split differs from /playerfl/split_layer = $split"
else
  fail "playerfl: $n split decisions printed (expected 1), exit $RC"
fi

# ---- --quiet -----------------------------------------------------------------------------------------
RC=0
FEDSILO_FAULT=nan:rank=1,round=1 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${RUN[@]}" --rounds 2 --fl.skip_diverged on \
  --quiet --output "$WORK/quiet.h5" >"$WORK/quiet.out" 2>"$WORK/quiet.err" || RC=$?
if [ "$RC" = 0 ] && [ ! -s "$WORK/quiet.out" ] && h5_complete "$WORK/quiet.h5"; then
  log "ok: --quiet prints nothing on standard output and writes the results"
else
  fail "--quiet: exit $RC, $(wc -c <"$WORK/quiet.out") bytes on standard output"
fi
[ ! -s "$WORK/quiet.err" ] || fail "--quiet: standard error not empty: $(head -c 300 "$WORK/quiet.err")"
RC=0
FEDSILO_FAULT=nan:rank=1,round=1 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${RUN[@]}" --rounds 2 --fl.skip_diverged on \
  --output "$WORK/loud.h5" >/dev/null 2>"$WORK/loud.err" || RC=$?
grep -q '^fedsilo: warning: .*update dropped (fl.skip_diverged)$' "$WORK/loud.err" ||
  fail "without --quiet the same run should warn (exit $RC, standard error: $(head -c 300 "$WORK/loud.err"))"
RC=0
"$MPIEXEC" -n 2 "$FEDSILO_EXE" "${RUN[@]}" --rounds 2 --train.lr 1e6 --quiet --output "$WORK/fail.h5" \
  >"$WORK/fail.out" 2>"$WORK/fail.err" || RC=$?
if [ "$RC" = 1 ] && [ ! -s "$WORK/fail.out" ] && [ "$(grep -c '^fedsilo: error:' "$WORK/fail.err")" = 1 ]; then
  log "ok: --quiet keeps a failing run's one error line"
else
  fail "--quiet, failing run: exit $RC, errors: $(head -c 300 "$WORK/fail.err")"
fi

# ---- output.jsonl --------------------------------------------------------------------------------------
JS=("${RUN[@]}" --rounds 6 --eval.every 2 --output.jsonl true)
for np in 1 2 4; do
  run_to "$WORK/js$np.log" "$np" "${JS[@]}" --output "$WORK/js$np.h5"
  [ "$RC" = 0 ] || fail "jsonl run at $np ranks: exit $RC"
done
"$PY" - "$WORK" <<'PYEOF' && log "ok: JSON Lines = /rounds, NaN as null, same at 1/2/4 ranks" || fail "JSON Lines checks (above)"
import json, math, sys, h5py, numpy as np
w = sys.argv[1]
KEYS = ["round", "evaluated", "global_accuracy", "global_loss", "client_accuracy_mean", "client_accuracy_worst10",
        "participants", "seconds", "train_seconds", "eta_seconds"]
TIMING = {"seconds", "train_seconds", "eta_seconds"}
bad = []
def rows(path):
    text = open(path).read()
    if not text.endswith("\n"): bad.append(f"{path}: does not end with a newline")
    return [json.loads(l) for l in text.splitlines()]
def same(x, h):  # a JSON figure against the results file's (NaN there = null here)
    return (x is None and math.isnan(h)) or (x is not None and x == h)
runs = {np_: rows(f"{w}/js{np_}.h5.jsonl") for np_ in (1, 2, 4)}
for np_, objs in runs.items():
    with h5py.File(f"{w}/js{np_}.h5", "r") as f:
        r = {k: f["rounds/" + k][()] for k in ("round", "global_accuracy", "global_loss", "seconds", "train_seconds",
                                                "participated", "client_accuracy")}
    if [o["round"] for o in objs] != list(range(6)): bad.append(f"np {np_}: rounds {[o['round'] for o in objs]}")
    for t, o in enumerate(objs):
        if list(o) != KEYS: bad.append(f"np {np_} round {t}: keys {list(o)}")
        if o["evaluated"] != (t % 2 == 0 or t == 5): bad.append(f"np {np_} round {t}: evaluated = {o['evaluated']}")
        for k in ("global_accuracy", "global_loss", "seconds", "train_seconds"):
            if not same(o[k], r[k][t]): bad.append(f"np {np_} round {t}: {k} {o[k]} vs {r[k][t]}")
        if o["participants"] != int((r["participated"][t] == 1).sum()): bad.append(f"np {np_} round {t}: participants")
        acc = r["client_accuracy"][t]
        if o["evaluated"]:
            if abs(o["client_accuracy_mean"] - acc.mean()) > 1e-12: bad.append(f"np {np_} round {t}: mean accuracy")
        elif o["client_accuracy_mean"] is not None or o["global_accuracy"] is not None:
            bad.append(f"np {np_} round {t}: a round that was not evaluated has figures")
    if objs[-1]["eta_seconds"] != 0: bad.append(f"np {np_}: last eta {objs[-1]['eta_seconds']}")
strip = lambda objs: [{k: v for k, v in o.items() if k not in TIMING} for o in objs]
for np_ in (2, 4):
    if strip(runs[np_]) != strip(runs[1]): bad.append(f"np {np_}: JSON Lines differ from np 1 beyond the timing fields")
for m in bad: print("   ", m)
sys.exit(1 if bad else 0)
PYEOF

# Whole lines while the run writes it: snapshots taken during a slowed-down run parse line by line.
FEDSILO_FAULT=slow:rank=0,ms=150 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${JS[@]}" --output "$WORK/tail.h5" \
  >"$WORK/tail.log" 2>&1 &
pid=$!
snaps=0
while kill -0 "$pid" 2>/dev/null; do
  if [ -f "$WORK/tail.h5.jsonl" ]; then
    cp "$WORK/tail.h5.jsonl" "$WORK/snap.$snaps"
    snaps=$((snaps + 1))
  fi
  sleep 0.05
done
wait "$pid" || fail "slowed jsonl run failed"
"$PY" - "$WORK" "$snaps" <<'PYEOF' && log "ok: $snaps snapshots taken while the run wrote, each of whole lines" || fail "a snapshot held a torn line (above)"
import json, sys
w, n = sys.argv[1], int(sys.argv[2])
bad = []
for i in range(n):
    text = open(f"{w}/snap.{i}").read()
    if text and not text.endswith("\n"): bad.append(f"snapshot {i} ends mid-line: {text[-40:]!r}")
    for l in text.splitlines(): json.loads(l)
print("    snapshots:", n, "line counts:", sorted({len(open(f'{w}/snap.{i}').read().splitlines()) for i in range(n)}))
for m in bad: print("   ", m)
sys.exit(1 if bad or n == 0 else 0)
PYEOF

# Resume: rank 1 fails while recording round 3 (the last checkpoint is before round 2, so the file
# holds round 2 as well); a torn line is appended as a hard kill could leave; --resume must end with
# rounds 0..5 exactly once, equal to the uninterrupted run at 2 ranks but the timing fields.
RC=0
FEDSILO_FAULT=io:rank=1,round=3 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${JS[@]}" --checkpoint.every 2 \
  --output "$WORK/res.h5" >"$WORK/res1.log" 2>&1 || RC=$?
[ "$RC" != 0 ] && [ -f "$WORK/res.h5.ckpt" ] || fail "the io fault did not stop the run after a checkpoint (exit $RC)"
before=$(wc -l <"$WORK/res.h5.jsonl")
printf '{"round": 3, "evaluated": tr' >>"$WORK/res.h5.jsonl"
run_to "$WORK/res2.log" 2 "${JS[@]}" --checkpoint.every 2 --resume --output "$WORK/res.h5"
[ "$RC" = 0 ] && grep -q '^resuming from' "$WORK/res2.log" || fail "resume: exit $RC"
"$PY" - "$WORK/res.h5.jsonl" "$WORK/js2.h5.jsonl" "$before" <<'PYEOF' && log "ok: resumed JSON Lines = uninterrupted run (the killed run had $before lines)" || fail "resumed JSON Lines (above)"
import json, sys
res = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
ref = [json.loads(l) for l in open(sys.argv[2]).read().splitlines()]
TIMING = {"seconds", "train_seconds", "eta_seconds"}
strip = lambda objs: [{k: v for k, v in o.items() if k not in TIMING} for o in objs]
bad = []
if int(sys.argv[3]) < 3: bad.append(f"the killed run wrote {sys.argv[3]} lines: the resume had no rounds to drop")
if [o["round"] for o in res] != list(range(6)): bad.append(f"rounds {[o['round'] for o in res]}")
if strip(res) != strip(ref): bad.append("figures differ from the uninterrupted run")
for m in bad: print("   ", m)
sys.exit(1 if bad else 0)
PYEOF
finish
