#!/usr/bin/env bash
# label: integration
# timeout: 900
# cost: 61
# Every registered algorithm runs for 2 rounds (a one-shot algorithm: the count its registry entry
# declares for the configuration, read with tests/support/registry_rounds_main.cpp) at 2 ranks and
# writes a complete results file: a new algorithm cannot land untested. Partial-federation algorithms
# get a three-block MLP so that playerfl_random has a split to draw; the others the one-hidden-layer
# MLP (GEMS's neuron-wise mode needs exactly one hidden layer, and two rounds).
source "$(dirname "$0")/lib/common.sh"
: "${FEDSILO_REGISTRY_ROUNDS:?run through ctest (FEDSILO_REGISTRY_ROUNDS unset)}"
algs=$("$FEDSILO_REGISTRY_ROUNDS" --list)
[ -n "$algs" ] || { fail "the registry lists no algorithms"; finish; }
help=$("$FEDSILO_EXE" --help)
for alg in $algs; do
  grep -qE "^  $alg:" <<<"$help" || fail "--help does not list $alg"
  extra=()
  case $alg in playerfl*) extra=(--model.hidden 16,16) ;; esac
  args=("${SMALL[@]}" "${extra[@]}" --algorithm "$alg")
  if ! rounds=$("$FEDSILO_REGISTRY_ROUNDS" "${args[@]}" 2>"$TMP/$alg.rounds.err"); then
    fail "$alg: no round count: $(cat "$TMP/$alg.rounds.err")"
    continue
  fi
  if "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${args[@]}" --rounds "$rounds" --output "$TMP/$alg.h5" >"$TMP/$alg.log" 2>&1 \
     && "$PY" -c "import h5py,sys; f=h5py.File(sys.argv[1]); assert 'summary' in f and f['rounds/client_accuracy'].shape==(int(sys.argv[2]), 4)" "$TMP/$alg.h5" "$rounds"; then
    pass "$alg ($rounds rounds)"
  else
    tail -5 "$TMP/$alg.log" >&2
    fail "$alg"
  fi
done
finish
