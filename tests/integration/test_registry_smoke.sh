#!/usr/bin/env bash
# label: integration
# timeout: 900
# Every registered algorithm runs for 2 rounds (or its documented round count) at 2 ranks and
# writes a complete results file: a new algorithm cannot land untested. Partial-federation algorithms
# get a three-block MLP so that playerfl_random has a split to draw; the others the one-hidden-layer
# MLP (GEMS's neuron-wise mode needs exactly one hidden layer).
source "$(dirname "$0")/lib/common.sh"
algs=$("$FEDSILO_EXE" --help | awk '/^Algorithms:/{on=1; next} on && /^  [a-z_0-9]+:/{sub(":", "", $1); print $1} on && /^$/{on=0}')
[ -n "$algs" ] || { fail "no algorithms listed in --help"; finish; }
for alg in $algs; do
  extra=()
  case $alg in playerfl*) extra=(--model.hidden 16,16) ;; esac
  # One-shot algorithms declare their round count in --help ("one-shot").
  if "$FEDSILO_EXE" --help | grep -E "^  $alg:" | grep -qi "one-shot"; then extra+=(--rounds 1); fi
  if "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${SMALL[@]}" "${extra[@]}" --algorithm "$alg" --output "$TMP/$alg.h5" >"$TMP/$alg.log" 2>&1 \
     && "$PY" -c "import h5py,sys; f=h5py.File(sys.argv[1]); assert 'summary' in f and f['rounds/client_accuracy'].shape[1]==4" "$TMP/$alg.h5"; then
    pass "$alg"
  else
    tail -5 "$TMP/$alg.log" >&2
    fail "$alg"
  fi
done
finish
