#!/usr/bin/env bash
# label: integration
# timeout: 180
# train.precision = bf16 where a rank cannot run it: every rank exits 2 with one line naming
# train.precision = bf16 and what is missing, and no results file is left. A rank started with
# FEDSILO_ISA=avx2 stands for a CPU without AVX512-BF16 (on a CPU that really lacks it, every rank
# does). An unknown precision is a bad command line (exit 2) too.
source "$(dirname "$0")/lib/common.sh"
CNN=(--clients 4 --rounds 1 --model cnn_mcmahan --partition.samples_per_client 40 --train.batch 16 --eval.batch 100)

run=("$FEDSILO_EXE" "${CNN[@]}" --train.precision bf16 --output "$TMP/bf16.h5")
for rank in 0 1; do
  if [ "$rank" = 0 ]; then
    launch=(-n 1 env FEDSILO_ISA=avx2 "${run[@]}" : -n 1 "${run[@]}")
  else
    launch=(-n 1 "${run[@]}" : -n 1 env FEDSILO_ISA=avx2 "${run[@]}")
  fi
  rc=0
  "$MPIEXEC" "${launch[@]}" >"$TMP/refused$rank.log" 2>&1 || rc=$?
  [ "$rc" = 2 ] && pass "rank $rank without bf16: exit 2" || { cat "$TMP/refused$rank.log"; fail "rank $rank without bf16: exit $rc"; }
  n=$(grep -c "train.precision = bf16: " "$TMP/refused$rank.log" || true)
  [ "$n" = 1 ] && pass "one line names train.precision = bf16" || { cat "$TMP/refused$rank.log"; fail "$n lines name it"; }
  [ ! -e "$TMP/bf16.h5" ] && [ ! -e "$TMP/bf16.h5.partial" ] && pass "no results file" || fail "a results file was left"
done

rc=0
"$MPIEXEC" -n 1 "$FEDSILO_EXE" "${CNN[@]}" --train.precision fp16 --output "$TMP/bad.h5" >"$TMP/bad.log" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "train.precision = fp16: expected one of fp32, bf16" "$TMP/bad.log" \
  && pass "train.precision = fp16: exit 2 naming the value" || { cat "$TMP/bad.log"; fail "fp16: exit $rc"; }
finish
