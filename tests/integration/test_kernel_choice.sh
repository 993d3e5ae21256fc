#!/usr/bin/env bash
# label: integration
# timeout: 240
# cost: 37
# All ranks of a run agree on one float kernel set, the lowest any rank asks for (app/kernel_choice):
# a rank started with FEDSILO_ISA=generic (or avx2) brings the whole run down to it, whichever rank it
# is; the set is printed and stored as the root attribute `kernels`; and since every set gives the same
# bits, the results equal the default run's. A bad FEDSILO_ISA on one rank fails every rank with exit 2.
source "$(dirname "$0")/lib/common.sh"
CNN=(--clients 4 --rounds 2 --model cnn_mcmahan --partition.samples_per_client 40 --train.batch 16 --eval.batch 100)

attr() { "$PY" -c 'import sys, h5py; print(h5py.File(sys.argv[1], "r").attrs["kernels"].decode())' "$1"; }
same_results() {
  "$PY" - "$1" "$2" <<'PYEOF'
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
for n in ("model/global", "rounds/client_loss", "rounds/client_accuracy", "rounds/global_loss"):
    if not np.array_equal(a[n][:], b[n][:], equal_nan=True):
        print("differs:", n); sys.exit(1)
PYEOF
}

# The default runs: the CNN (avx2 runs it at full speed) and the small MLP (the generic set computes
# each multiply-add with std::fma, a library call on CPUs without FMA: far too slow for a CNN test).
"$MPIEXEC" -n 2 "$FEDSILO_EXE" "${CNN[@]}" --output "$TMP/cnn.h5" >"$TMP/cnn.log" 2>&1 \
  || { cat "$TMP/cnn.log"; fail "default CNN run failed"; finish; }
"$MPIEXEC" -n 2 "$FEDSILO_EXE" "${SMALL[@]}" --output "$TMP/mlp.h5" >"$TMP/mlp.log" 2>&1 \
  || { cat "$TMP/mlp.log"; fail "default MLP run failed"; finish; }
best=$(attr "$TMP/cnn.h5")
case $best in avx512 | avx2 | generic) pass "default run: kernels = $best" ;; *) fail "kernels attribute '$best'" ;; esac
grep -qx "kernels: $best (the lowest set of all ranks; FEDSILO_ISA selects a lower one)" "$TMP/cnn.log" \
  && pass "the choice is printed" || fail "no 'kernels: $best' line in the output"

# One rank asks for a lower set: rank 1 (not the root) for generic, then rank 0 for avx2 (where the CPU has it).
cases=("generic 1 mlp")
[ "$best" = avx512 ] && cases+=("avx2 0 cnn")
for c in "${cases[@]}"; do
  read -r isa rank model <<<"$c"
  if [ "$model" = cnn ]; then args=("${CNN[@]}"); else args=("${SMALL[@]}"); fi
  run=("$FEDSILO_EXE" "${args[@]}" --output "$TMP/$isa.h5")
  if [ "$rank" = 0 ]; then
    launch=(-n 1 env FEDSILO_ISA=$isa "${run[@]}" : -n 1 "${run[@]}")
  else
    launch=(-n 1 "${run[@]}" : -n 1 env FEDSILO_ISA=$isa "${run[@]}")
  fi
  "$MPIEXEC" "${launch[@]}" >"$TMP/$isa.log" 2>&1 || { cat "$TMP/$isa.log"; fail "run with rank $rank at $isa failed"; continue; }
  got=$(attr "$TMP/$isa.h5")
  [ "$got" = "$isa" ] && pass "rank $rank asks for $isa: the run uses $isa" || fail "rank $rank asks for $isa: kernels = $got"
  same_results "$TMP/$model.h5" "$TMP/$isa.h5" && pass "$isa kernels ($model): results identical to $best" \
    || fail "$isa kernels ($model): results differ from $best"
done

# A bad name on one rank: exit 2, one line naming the value, no results file.
rc=0
"$MPIEXEC" -n 1 "$FEDSILO_EXE" "${SMALL[@]}" --output "$TMP/bad.h5" : -n 1 env FEDSILO_ISA=sse9 "$FEDSILO_EXE" \
  "${SMALL[@]}" --output "$TMP/bad.h5" >"$TMP/bad.log" 2>&1 || rc=$?
[ "$rc" = 2 ] && pass "FEDSILO_ISA=sse9 on rank 1: exit 2" || fail "FEDSILO_ISA=sse9 on rank 1: exit $rc, expected 2"
grep -q "FEDSILO_ISA = sse9: expected avx512, avx2 or generic" "$TMP/bad.log" && pass "the error names the value" \
  || { cat "$TMP/bad.log"; fail "no error line naming FEDSILO_ISA = sse9"; }
[ ! -e "$TMP/bad.h5" ] && [ ! -e "$TMP/bad.h5.partial" ] && pass "no results file" || fail "a results file was left"
finish
