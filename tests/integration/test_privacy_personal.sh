#!/usr/bin/env bash
# label: integration
# timeout: 600
# cost: 60
# DP-SGD under the personalised algorithms (docs/privacy.md, "Algorithms" of sample-level DP): every
# private step that touches a client's records is charged to its accountant, whichever model it trains:
# Ditto's personal model's steps beside the global model's (2 per batch), pFedMe's K inner steps, each
# on its own Poisson batch (K per batch). For each of them:
#  * /privacy/steps counts those steps (factor x epochs x ceil(n_k / batch) per round);
#  * each client's recorded epsilon is `fedsilo epsilon` at its sampling rate and those steps;
#  * with privacy.target_epsilon the calibration plans them all: every client ends at or below the
#    target, and close to it;
#  * the run is identical at 1 and 2 ranks.
TEST_NAME=test_privacy_personal
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir

check_algorithm() {  # name, steps per batch, extra options...
  local algo=$1 factor=$2
  shift 2
  local ARGS=("${TINY[@]}" --algorithm "$algo" "$@" --rounds 2 --train.epochs 1 --train.batch 16 --eval.batch 100
    --seed 3 --privacy.level sample)
  for np in 1 2; do
    "$MPIEXEC" -n $np "$FEDSILO_EXE" "${ARGS[@]}" --privacy.noise_multiplier 1.1 --output "$WORK/$algo$np.h5" \
      >"$WORK/$algo$np.log" 2>&1 || { tail -5 "$WORK/$algo$np.log" >&2; die "$algo at $np ranks failed"; }
  done

  # steps: every charged step, every client, every round (all clients take part)
  "$PY" - "$WORK/${algo}1.h5" "$factor" <<'PYEOF' && log "$algo: steps count all $factor private steps per batch" ||
import h5py, math, sys
f = h5py.File(sys.argv[1], "r")
q, steps, factor = f["privacy/sampling_rate"][:], f["privacy/steps"][:], int(sys.argv[2])
bad = 0
for k in range(len(q)):
    n = round(16 / q[k])
    want = 2 * factor * 1 * math.ceil(n / 16)  # rounds x steps per batch x epochs x batches
    if int(steps[k]) != want:
        print(f"    client {k}: {int(steps[k])} steps, expected {want} (n = {n})"); bad += 1
sys.exit(1 if bad else 0)
PYEOF
    fail "$algo: steps (above)"

  local q steps eps want
  read -r q steps eps < <("$PY" -c "import h5py,sys; f=h5py.File(sys.argv[1]); print('%.17g %d %.6g' % (f['privacy/sampling_rate'][0], f['privacy/steps'][0], f['privacy/epsilon'][-1, 0]))" "$WORK/${algo}1.h5")
  want=$("$FEDSILO_EXE" epsilon --sample_rate "$q" --noise_multiplier 1.1 --steps "$steps" --delta 1e-5 | sed -n 's/^epsilon = //p')
  [ -n "$want" ] && [ "$eps" = "$want" ] && log "$algo: client 0 epsilon $eps after $steps steps (fedsilo epsilon: $want)" ||
    fail "$algo: client 0 recorded epsilon $eps after $steps steps, fedsilo epsilon prints $want"

  "$PY" - "$WORK/${algo}1.h5" "$WORK/${algo}2.h5" <<'PYEOF' && log "$algo: 1 and 2 ranks identical" || fail "$algo: 1 and 2 ranks differ (above)"
import h5py, numpy as np, sys
SKIP = {"rounds/seconds", "rounds/train_seconds", "summary/seconds_per_round", "clients/rank"}
def items(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
    return out
a, b = items(sys.argv[1]), items(sys.argv[2])
bad = [k for k in sorted(set(a) | set(b)) if k not in SKIP and
       (k not in a or k not in b or not np.array_equal(np.asarray(a[k]), np.asarray(b[k]),
                                                       equal_nan=np.asarray(a[k]).dtype.kind in "fc"))]
for k in bad: print("    /" + k)
sys.exit(1 if bad or len(a) < 20 else 0)
PYEOF

  "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${ARGS[@]}" --privacy.target_epsilon 4 --output "$WORK/${algo}t.h5" >"$WORK/${algo}t.log" 2>&1 ||
    { tail -5 "$WORK/${algo}t.log" >&2; die "$algo with a target epsilon failed"; }
  "$PY" -c "
import h5py, sys
e = h5py.File(sys.argv[1])['privacy/epsilon'][-1, :]
print('    final epsilon per client:', ' '.join('%.3f' % v for v in e))
sys.exit(0 if e.max() <= 4 and e.max() > 3 else 1)" "$WORK/${algo}t.h5" &&
    log "$algo: target epsilon 4 met with all $factor steps per batch planned" || fail "$algo: target epsilon 4: final epsilon off (above)"
}

check_algorithm ditto 2
check_algorithm pfedme 3 --pfedme.inner_steps 3 --pfedme.personal_lr 0.01 --train.lr 0.01
finish
