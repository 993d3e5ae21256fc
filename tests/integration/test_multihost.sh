#!/usr/bin/env bash
# label: integration
# timeout: 900
# cost: 31
# fedsilo across several "hosts": Linux network namespaces on this machine, each with its own network
# stack and host name, joined by veth links to a bridge, with ranks launched by Open MPI's rsh
# launcher through an agent that enters the host's namespaces (tests/integration/lib/netns.sh).
# Ranks on different hosts talk over TCP on those links, as on a cluster.
#  1. 2 hosts x 2 ranks, and 3 hosts with 2 + 1 + 1 ranks: results identical to the single-host run
#     at 4 ranks (every dataset but wall times and rank placement), and MPI traffic crossed every
#     host's link (more bytes received than one copy of the model).
#  2. A host killed mid-run (SIGKILL to every process of host 1, after a periodic checkpoint): every
#     process of every host gone within 15 s, the checkpoint left, no results file; --resume across
#     the hosts completes to a file identical to the uninterrupted run.
# Needs root, iproute2 and util-linux (unshare): without them, or where network namespaces are not
# permitted, the test FAILS with the reason; it never skips. The slow-link variant (delay and
# bandwidth limits, per-round cost) is test_multihost_netem (label long).
TEST_NAME=test_multihost
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
source "$(dirname "${BASH_SOURCE[0]}")/lib/netns.sh"
KILL_LIMIT_S=15

netns_setup 3
A=("${TINY[@]}" --rounds 4 --seed 11)
"$MPIEXEC" -n 4 "$FEDSILO_EXE" "${A[@]}" --output "$WORK/ref.h5" >"$WORK/ref.log" 2>&1 ||
  die "the single-host reference run failed: $(tail -3 "$WORK/ref.log")"
model_bytes=$(( $(sed -n 's/.*model mlp (\([0-9]*\) parameters).*/\1/p' "$WORK/ref.log") * 4 ))

# run_hosts NAME HOSTS: 4 ranks placed by HOSTS; identical results and traffic on every used link.
run_hosts() {
  local name=$1 hosts=$2 i t0 rc=0
  local -a before=()
  for ((i = 0; i < NETNS_HOSTS; i++)); do before[i]=$(netns_rx_bytes "$i"); done
  t0=$(now_ms)
  netns_mpirun "$hosts" -n 4 "$FEDSILO_EXE" "${A[@]}" --output "$WORK/$name.h5" >"$WORK/$name.log" 2>&1 || rc=$?
  if [ "$rc" != 0 ]; then
    fail "$name ($hosts): exit $rc"
    tail -8 "$WORK/$name.log" >&2
    return
  fi
  if h5_same "$WORK/ref.h5" "$WORK/$name.h5"; then
    log "$name ($hosts): identical to the single-host run, $(($(now_ms) - t0)) ms"
  else
    fail "$name ($hosts): results differ from the single-host run (above)"
  fi
  for ((i = 0; i < NETNS_HOSTS; i++)); do
    grep -q "fs-h$i:" <<<"$hosts" || continue
    local got=$(($(netns_rx_bytes "$i") - before[i]))
    ((got > model_bytes)) || fail "$name: host $i received $got bytes, fewer than one model ($model_bytes): did MPI use the links?"
    log "$name: host $i received $got bytes"
  done
}

run_hosts two_hosts fs-h0:2,fs-h1:2
run_hosts three_hosts fs-h0:2,fs-h1:1,fs-h2:1

# ---- a host fails hard mid-run ------------------------------------------------------------------
K=("${TINY[@]}" --rounds 8 --seed 11)
"$MPIEXEC" -n 4 "$FEDSILO_EXE" "${K[@]}" --output "$WORK/kref.h5" >"$WORK/kref.log" 2>&1 ||
  die "the 8-round reference run failed: $(tail -3 "$WORK/kref.log")"
# A test-only 400 ms pause after each round keeps the run going until the kill lands.
FEDSILO_FAULT=slow:rank=0,ms=400 netns_mpirun fs-h0:2,fs-h1:2 -n 4 "$FEDSILO_EXE" "${K[@]}" --checkpoint.every 2 \
  --output "$WORK/kill.h5" >"$WORK/kill.log" 2>&1 &
pid=$!
if ! wait_for_line '^checkpoint before round 4' "$WORK/kill.log" 180 "$pid"; then
  wait "$pid" || true
  tail -8 "$WORK/kill.log" >&2
  die "the run on 2 hosts never wrote its checkpoint before round 4"
fi
t0=$(now_ms)
netns_kill_host 1
rc=0
wait "$pid" || rc=$?
gone=
while (($(now_ms) - t0 < KILL_LIMIT_S * 1000)); do
  if [ -z "$(netns_pids 0)$(netns_pids 1)" ]; then
    gone=$(($(now_ms) - t0))
    break
  fi
  sleep 0.1
done
if [ -z "$gone" ]; then
  fail "host 1 killed: processes still running after $KILL_LIMIT_S s: host 0: $(netns_pids 0 | tr '\n' ' ') host 1: $(netns_pids 1 | tr '\n' ' ')"
  netns_kill_host 0
else
  log "host 1 killed after round 3's checkpoint: mpirun exited $rc, every process of both hosts gone in $gone ms"
fi
[ "$rc" != 0 ] || fail "host 1 killed: mpirun exited 0"
[ ! -e "$WORK/kill.h5" ] || fail "host 1 killed: a results file $WORK/kill.h5 was published"
[ -f "$WORK/kill.h5.ckpt" ] || die "host 1 killed: no checkpoint $WORK/kill.h5.ckpt left to resume from"
rc=0
netns_mpirun fs-h0:2,fs-h1:2 -n 4 "$FEDSILO_EXE" "${K[@]}" --checkpoint.every 2 --output "$WORK/kill.h5" --resume \
  >"$WORK/resume.log" 2>&1 || rc=$?
if [ "$rc" != 0 ]; then
  fail "resume on 2 hosts after the kill: exit $rc"
  tail -8 "$WORK/resume.log" >&2
else
  grep -q '^resuming from' "$WORK/resume.log" || fail "the run after the kill did not resume from the checkpoint"
  [ ! -e "$WORK/kill.h5.ckpt" ] && [ ! -e "$WORK/kill.h5.partial" ] || fail "checkpoint or partial file left after the resumed run"
  if h5_same "$WORK/kref.h5" "$WORK/kill.h5"; then
    log "resumed on 2 hosts ($(grep -m1 '^resuming from' "$WORK/resume.log")): identical to the uninterrupted run"
  else
    fail "resumed on 2 hosts: results differ from the uninterrupted run (above)"
  fi
fi
finish
