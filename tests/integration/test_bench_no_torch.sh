#!/usr/bin/env bash
# label: integration
# timeout: 300
# cost: 21
# bench/compare_torch.sh --no-torch runs the fedsilo workloads on a machine without Debian's
# python3-torch and never tries to install it (PyTorch does not run); without --no-torch the same
# machine is asked for the package. The machine without it is made with stand-ins first on PATH:
# dpkg-query that lists nothing installed and apt-get that records each call and fails.
TEST_NAME=test_bench_no_torch
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
mkdir "$WORK/bin"
cat >"$WORK/bin/dpkg-query" <<'EOF'
#!/bin/sh
exit 1
EOF
cat >"$WORK/bin/apt-get" <<EOF
#!/bin/sh
echo "apt-get \$*" >>"$WORK/apt-get.calls"
exit 100
EOF
chmod +x "$WORK/bin/dpkg-query" "$WORK/bin/apt-get"
BENCH=(bash "$FEDSILO_SOURCE_DIR/bench/compare_torch.sh" --build "$FEDSILO_BINARY_DIR" --only w1 --reps 1
       --w1-rounds 1)

rc=0
PATH=$WORK/bin:$PATH "${BENCH[@]}" --out "$WORK/with" >"$WORK/with.log" 2>&1 || rc=$?
if [ "$rc" = 2 ] && [ -s "$WORK/apt-get.calls" ] && grep -q python3-torch "$WORK/with.log"; then
  log "without --no-torch: exit 2 after asking apt-get for python3-torch ($(head -1 "$WORK/apt-get.calls"))"
else
  fail "without --no-torch on a machine without python3-torch: exit $rc, apt-get calls:" \
    "'$(cat "$WORK/apt-get.calls" 2>/dev/null)' (the stand-ins did not take effect: the check below proves nothing)"
fi
rm -f "$WORK/apt-get.calls"

rc=0
PATH=$WORK/bin:$PATH "${BENCH[@]}" --no-torch --out "$WORK/without" >"$WORK/without.log" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "--no-torch: exit $rc: $(tail -3 "$WORK/without.log")"
[ ! -e "$WORK/apt-get.calls" ] || fail "--no-torch called apt-get: $(cat "$WORK/apt-get.calls")"
# The summary's W1 table has this build's row (its samples/s and share of the peak) and no PyTorch row.
SUM=$WORK/without/summary.txt
w1=$(sed -n '/^== w1/,/^$/p' "$SUM" 2>/dev/null)
row=$(grep -E '^fedsilo this build \(2 ranks\) +1 ' <<<"$w1" || true)
[ -n "$row" ] || fail "--no-torch: no W1 row for this build in the summary: $(head -5 "$SUM" 2>/dev/null)"
! grep -q '^torch' <<<"$w1" || fail "--no-torch: PyTorch rows in the W1 table: $(grep '^torch' <<<"$w1")"
[ "$FAILURES" = 0 ] && log "--no-torch: W1 ran without python3-torch and without apt-get: $(tr -s ' ' <<<"$row")"

# A build whose step benchmark gives no figure (a machine where it cannot run) still gets its runs and
# summary: the per-vCPU step times are left out, not the bench ended.
mkdir -p "$WORK/build/bench"
ln -s "$FEDSILO_BINARY_DIR/fedsilo" "$WORK/build/fedsilo"
printf '#!/bin/sh\necho "stand-in step benchmark: cannot run here" >&2\nexit 1\n' >"$WORK/build/bench/fedsilo_bench"
chmod +x "$WORK/build/bench/fedsilo_bench"
rc=0
PATH=$WORK/bin:$PATH bash "$FEDSILO_SOURCE_DIR/bench/compare_torch.sh" --build "$WORK/build" --only w1 --reps 1 \
  --w1-rounds 1 --no-torch --out "$WORK/nostep" >"$WORK/nostep.log" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "a step benchmark without a figure: exit $rc: $(tail -3 "$WORK/nostep.log")"
grep -qE '^fedsilo this build \(2 ranks\) +1 ' "$WORK/nostep/summary.txt" 2>/dev/null ||
  fail "a step benchmark without a figure: no W1 row in the summary"
! grep -q '^vcpu_step' "$WORK/nostep/fma_peak.txt" 2>/dev/null ||
  fail "a step benchmark without a figure: vcpu_step lines $(grep -c '^vcpu_step' "$WORK/nostep/fma_peak.txt")"
[ "$FAILURES" = 0 ] && log "a step benchmark without a figure: the W1 runs and summary, no per-vCPU line"
finish
