#!/usr/bin/env bash
# label: long
# timeout: 1800
# What a slow inter-silo link costs per round: fedsilo on 2 simulated hosts (lib/netns.sh) x 2 ranks,
# host 1's link (both directions) given a one-way delay and/or a bandwidth limit (tc netem, or the
# user-space link lib/slow_link.py on kernels without netem), one run per setting. Prints, per
# setting, the fastest and the median wall time of a round (rounds 1..R-1 of the results file's
# /rounds/seconds) and the cost of the link: the fastest round's excess over the unshaped link's (on
# a shared machine other work only ever adds time, so the fastest round is the steadier figure). No
# timing assertions. Each run's results must still equal the single-host run.
# FEDSILO_NETEM_SETTINGS overrides the settings ("delay_ms:rate_mbit ...", 0 = none; the first is
# the reference, and is repeated at the end to show the drift), FEDSILO_NETEM_ROUNDS the rounds per
# run (default 10). The model is the default MLP 784-200-200-10
# (199210 parameters, 0.8 MB), so that bandwidth matters as it would for a real model.
TEST_NAME=test_multihost_netem
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
source "$(dirname "${BASH_SOURCE[0]}")/lib/netns.sh"

SETTINGS=${FEDSILO_NETEM_SETTINGS:-"0:0 1:0 10:0 50:0 0:1000 0:100 0:10 50:10 0:0"}
ROUNDS=${FEDSILO_NETEM_ROUNDS:-10}
A=(--dataset fashion_mnist --partition.samples_per_client 100 --clients 4 --rounds "$ROUNDS" --seed 2)

NETNS_SLOW_HOST=1
netns_setup 2
"$MPIEXEC" -n 4 "$FEDSILO_EXE" "${A[@]}" --output "$WORK/ref.h5" >"$WORK/ref.log" 2>&1 ||
  die "the single-host reference run failed: $(tail -3 "$WORK/ref.log")"

# round_ms FILE: "fastest median" of /rounds/seconds over rounds 1.. (round 0 includes warm-up), in ms.
round_ms() {
  "$PY" - "$1" <<'EOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    s = 1000 * np.asarray(f["rounds/seconds"])[1:]
print(f"{s.min():.1f} {np.median(s):.1f}")
EOF
}

read -r ref_min ref_median <<<"$(round_ms "$WORK/ref.h5")"
declare -a ROWS=("| single host (shared memory) | - | - | $ref_min | $ref_median | - |")
base_ms=
run=0
for setting in $SETTINGS; do
  delay=${setting%%:*} rate=${setting##*:}
  netns_shape 1 "$delay" "$rate"
  # Numbered: the first setting comes again at the end, and fedsilo refuses to replace a finished file.
  run=$((run + 1))
  out="$WORK/run${run}_d${delay}_r${rate}.h5"
  t0=$(now_ms)
  rc=0
  netns_mpirun fs-h0:2,fs-h1:2 -n 4 "$FEDSILO_EXE" "${A[@]}" --output "$out" >"$out.log" 2>&1 || rc=$?
  wall=$(($(now_ms) - t0))
  if [ "$rc" != 0 ]; then
    fail "delay $delay ms, rate $rate Mbit/s: exit $rc"
    tail -5 "$out.log" >&2
    continue
  fi
  h5_same "$WORK/ref.h5" "$out" || fail "delay $delay ms, rate $rate Mbit/s: results differ from the single-host run"
  read -r ms median <<<"$(round_ms "$out")"
  [ -n "$base_ms" ] || base_ms=$ms
  cost=$("$PY" -c "print(f'{$ms - $base_ms:+.1f}')")
  dtext=$delay rtext=$rate
  [ "$delay" != 0 ] || dtext=none
  [ "$rate" != 0 ] || rtext=unlimited
  ROWS+=("| $NETNS_SHAPER | $dtext | $rtext | $ms | $median | $cost |")
  log "delay $delay ms, rate $rate Mbit/s: rounds $ms ms fastest, $median ms median ($cost ms over the first setting), run $wall ms"
done
netns_shape 1 0 0

echo
echo "Per-round cost of host 1's link ($ROUNDS rounds of FedAvg, MLP 784-200-200-10, 4 clients on 2 hosts x 2 ranks)"
echo "| link | one-way delay (ms) | bandwidth (Mbit/s) | fastest round (ms) | median round (ms) | cost per round (ms) |"
echo "| --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${ROWS[@]}"
finish
