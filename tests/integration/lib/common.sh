# Shared helpers for the foundation integration tests (sourced, not run; lives in lib/ so ctest does not register it).
set -euo pipefail
: "${FEDSILO_EXE:?run through ctest (FEDSILO_EXE unset)}"
: "${FEDSILO_SOURCE_DIR:?run through ctest}"
MPIEXEC=${MPIEXEC:-mpirun}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=1
PY=/usr/bin/python3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fedsilo_it.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }
finish() {
  if [ "$FAILS" -ne 0 ]; then echo "$FAILS check(s) failed" >&2; exit 1; fi
  echo "all checks passed"
}
# A small, fast experiment: 100 FashionMNIST samples per client, a 16-unit MLP.
SMALL=(--clients 4 --rounds 2 --model.hidden 16 --partition.samples_per_client 100 --train.batch 16 --eval.batch 100)

# resume_across_ranks WHAT ROUND ROWS "DATASET..." ARGS...: a reference run at 2 ranks; then a run stopped
# by an injected write failure on rank 0 at ROUND (which leaves the last checkpoint), resumed at 1 and at
# 4 ranks (each from a copy of what the stopped run left: the stopped runs would be the same run twice):
# each must equal the reference in every DATASET and hold ROWS rows of /rounds/sim_time. With
# RESUME_REF=FILE, FILE is the reference: a finished 2-rank run of ARGS without their --checkpoint.every
# (which must not change the results), not run again.
resume_across_ranks() {
  local what=$1 round=$2 rows=$3 datasets=$4 np rc f
  shift 4
  rm -f "$TMP"/ref.h5* "$TMP"/stop.h5* "$TMP"/res[14].h5*  # an earlier call's files
  if [ -n "${RESUME_REF:-}" ]; then
    cp "$RESUME_REF" "$TMP/ref.h5" || { fail "no reference run $RESUME_REF"; return; }
  else
    "$MPIEXEC" -n 2 "$FEDSILO_EXE" "$@" --output "$TMP/ref.h5" >"$TMP/log" 2>&1 || { cat "$TMP/log"; fail "reference run"; return; }
  fi
  rc=0
  FEDSILO_FAULT=io:rank=0,round=$round "$MPIEXEC" -n 2 "$FEDSILO_EXE" "$@" --output "$TMP/stop.h5" >"$TMP/log" 2>&1 || rc=$?
  [ "$rc" -ne 0 ] && [ -f "$TMP/stop.h5.ckpt" ] || { fail "the injected failure left no checkpoint (exit $rc)"; return; }
  [ ! -e "$TMP/stop.h5" ] || { fail "the stopped run left a results file"; return; }
  for np in 1 4; do
    for f in "$TMP"/stop.h5.*; do cp "$f" "$TMP/res$np.h5.${f#"$TMP/stop.h5."}"; done
    "$MPIEXEC" -n $np "$FEDSILO_EXE" "$@" --output "$TMP/res$np.h5" --resume >"$TMP/log" 2>&1 ||
      { cat "$TMP/log"; fail "resume at np=$np"; continue; }
    grep -q '^resuming from' "$TMP/log" || { fail "np=$np: the run did not resume from the checkpoint"; continue; }
    # shellcheck disable=SC2086 # datasets is a word list
    "$PY" - "$TMP/ref.h5" "$TMP/res$np.h5" "$rows" $datasets <<'PYEOF' && pass "resumed at $np ranks: $what" || fail "resume at np=$np"
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
for d in sys.argv[4:]:
    assert np.array_equal(a[d][()], b[d][()], equal_nan=True), d
assert len(b["rounds/sim_time"]) == int(sys.argv[3])
PYEOF
  done
}

# expect_config_error WHAT OPTION ARGS...: a --dry-run of the SMALL experiment into $OUT with ARGS exits 2
# with one error line naming OPTION.
expect_config_error() {
  local what=$1 option=$2
  shift 2
  local rc=0
  "$FEDSILO_EXE" "${SMALL[@]}" --output "$OUT" --dry-run "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
  if [ "$rc" -ne 2 ]; then fail "$what: exit $rc, expected 2"; cat "$TMP/err" >&2; return; fi
  if [ "$(grep -c . "$TMP/err")" -ne 1 ] || ! grep -q -- "$option" "$TMP/err"; then
    fail "$what: expected one line naming $option"; cat "$TMP/err" >&2; return
  fi
  pass "$what: $(cat "$TMP/err")"
}
