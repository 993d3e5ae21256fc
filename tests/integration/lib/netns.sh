# Simulated cluster for the multi-host tests (test_multihost, test_multihost_netem). Sourced after
# hpc_common.sh and make_workdir, not run: it lives in lib/ so that tests/CMakeLists.txt does not
# register it.
#
# Each "host" is a Linux network namespace with its own network stack (interface eth0, address
# $NETNS_SUBNET.(i+1)/24) and, per process started in it, its own host name (a UTS namespace named
# fs-hI), so Open MPI sees separate nodes: ranks on one host use shared memory, ranks on different
# hosts TCP. The hosts' eth0 are veth links to a bridge in a "switch" namespace. mpirun runs on host
# 0; Open MPI's rsh launcher reaches the other hosts through an agent script that enters the host's
# namespaces (ip netns exec + unshare --uts) where a cluster would use ssh. Needs root, iproute2 and
# util-linux's unshare; netns_setup fails the test with the reason when any of them is missing.
#
# A host's link can be slowed (netns_shape: one-way delay and bandwidth, both directions): with tc's
# netem queueing discipline where the kernel has it, otherwise through lib/slow_link.py, a user-space
# link (two TAP interfaces and a relay process) that netns_setup puts in place of that host's veth
# when asked to (NETNS_SLOW_HOST).
NETNS_SUBNET=10.213.7
NETNS_PREFIX="fs$$"
NETNS_HOSTS=0
NETNS_AGENT=
NETNS_SLOW_HOST=${NETNS_SLOW_HOST:-}  # host index whose link netns_shape may slow
NETNS_SHAPER=                         # netem | relay, set by netns_setup when NETNS_SLOW_HOST is set

netns_name() { echo "${NETNS_PREFIX}h$1"; }  # host I's namespace

# netns_setup N: creates hosts 0..N-1, the switch and the links; installs the cleanup trap.
netns_setup() {
  local n=$1 i out
  [ "$(id -u)" = 0 ] || die "needs root to create network namespaces (ip netns add); run the test as root"
  for cmd in ip unshare; do
    command -v "$cmd" >/dev/null || die "needs '$cmd' (packages iproute2, util-linux): not found"
  done
  trap 'netns_cleanup; rm -rf "$WORK"' EXIT
  trap 'exit 130' INT TERM
  out=$(ip netns add "${NETNS_PREFIX}sw" 2>&1) ||
    die "cannot create a network namespace (ip netns add: $out): this machine does not permit network namespaces, which the multi-host test needs"
  ip -n "${NETNS_PREFIX}sw" link add br0 type bridge || die "cannot create a bridge in the switch namespace"
  ip -n "${NETNS_PREFIX}sw" link set br0 up
  [ -z "$NETNS_SLOW_HOST" ] || netns_choose_shaper
  for ((i = 0; i < n; i++)); do
    ip netns add "$(netns_name "$i")" || die "ip netns add $(netns_name "$i") failed"
    NETNS_HOSTS=$((i + 1))
    if [ "$NETNS_SHAPER" = relay ] && [ "$i" = "$NETNS_SLOW_HOST" ]; then
      netns_start_relay "$i"
    else
      ip link add "${NETNS_PREFIX}e$i" type veth peer name "${NETNS_PREFIX}p$i" || die "cannot create a veth pair"
      ip link set "${NETNS_PREFIX}e$i" netns "$(netns_name "$i")"
      ip link set "${NETNS_PREFIX}p$i" netns "${NETNS_PREFIX}sw"
      ip -n "$(netns_name "$i")" link set "${NETNS_PREFIX}e$i" name eth0
    fi
    ip -n "$(netns_name "$i")" addr add "$NETNS_SUBNET.$((i + 1))/24" dev eth0
    ip -n "$(netns_name "$i")" link set eth0 up
    ip -n "$(netns_name "$i")" link set lo up
    ip -n "${NETNS_PREFIX}sw" link set "${NETNS_PREFIX}p$i" master br0
    ip -n "${NETNS_PREFIX}sw" link set "${NETNS_PREFIX}p$i" up
  done
  unshare --uts true 2>/dev/null || die "cannot create a UTS namespace (unshare --uts): each host needs its own host name"
  # The agent Open MPI calls instead of ssh: "agent HOST COMMAND..." runs COMMAND through a shell on
  # HOST, as ssh would.
  NETNS_AGENT="$WORK/netns_agent.sh"
  cat >"$NETNS_AGENT" <<EOF
#!/bin/sh
host=\$1
shift
exec ip netns exec "${NETNS_PREFIX}h\${host#fs-h}" unshare --uts /bin/sh -c "hostname \$host && \$*"
EOF
  chmod +x "$NETNS_AGENT"
  # Addresses need a moment (duplicate address detection does not apply to IPv4, but the links do).
  for ((i = 1; i < n; i++)); do
    ip netns exec "$(netns_name 0)" bash -c "for t in \$(seq 50); do (exec 3<>/dev/tcp/$NETNS_SUBNET.$((i + 1))/9) 2>&1 | grep -q refused && exit 0; sleep 0.1; done; exit 1" ||
      die "host 0 cannot reach host $i ($NETNS_SUBNET.$((i + 1))) over the bridge"
  done
  log "hosts: $n network namespaces (${NETNS_PREFIX}h0..h$((n - 1))), subnet $NETNS_SUBNET.0/24, bridge in ${NETNS_PREFIX}sw"
}

# netns_pids I: the processes in host I's namespace.
netns_pids() { ip netns pids "$(netns_name "$1")" 2>/dev/null || true; }

# netns_kill_host I: SIGKILL to every process of host I (a host that fails hard).
netns_kill_host() {
  local pids
  pids=$(netns_pids "$1")
  # shellcheck disable=SC2086
  [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
}

netns_cleanup() {
  local i pids
  for ((i = 0; i < NETNS_HOSTS; i++)); do netns_kill_host "$i"; done
  pids=$(ip netns pids "${NETNS_PREFIX}sw" 2>/dev/null || true)  # the relay, if any
  # shellcheck disable=SC2086
  [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
  for ((i = 0; i < NETNS_HOSTS; i++)); do ip netns del "$(netns_name "$i")" 2>/dev/null || true; done
  ip netns del "${NETNS_PREFIX}sw" 2>/dev/null || true
}

# netns_rx_bytes I: bytes received on host I's link so far.
netns_rx_bytes() { ip netns exec "$(netns_name "$1")" cat /sys/class/net/eth0/statistics/rx_bytes; }

# netns_mpirun HOSTS ARGS...: mpirun on host 0 with the given --host list (e.g. fs-h0:2,fs-h1:2),
# TCP between hosts restricted to the test subnet; ARGS are mpirun's (e.g. -n 4 fedsilo ...).
# mpi_yield_when_idle: a waiting rank yields its core, as when oversubscribed on one host (here every
# "host" shares the same few cores).
netns_mpirun() {
  local hosts=$1
  shift
  ip netns exec "$(netns_name 0)" unshare --uts /bin/sh -c 'hostname fs-h0 && exec "$0" "$@"' \
    "$MPIEXEC" --host "$hosts" --mca plm_rsh_agent "$NETNS_AGENT" --mca mpi_yield_when_idle 1 \
    --mca btl self,vader,tcp --mca btl_tcp_if_include "$NETNS_SUBNET.0/24" --mca oob_tcp_if_include "$NETNS_SUBNET.0/24" \
    "$@"
}

# netns_choose_shaper: netem if this kernel has it (probed on the switch's loopback), else the relay.
netns_choose_shaper() {
  ip netns exec "${NETNS_PREFIX}sw" tc qdisc add dev lo root netem delay 1ms 2>/dev/null &&
    ip netns exec "${NETNS_PREFIX}sw" tc qdisc del dev lo root 2>/dev/null && NETNS_SHAPER=netem && return
  command -v tc >/dev/null || die "needs 'tc' (package iproute2) to shape links"
  [ -c /dev/net/tun ] || die "this kernel has no netem queueing discipline and no /dev/net/tun for the user-space link"
  NETNS_SHAPER=relay
  log "this kernel has no netem queueing discipline (tc: 'Specified qdisc kind is unknown'): host $NETNS_SLOW_HOST's link is the user-space relay lib/slow_link.py"
}

# netns_start_relay I: host I's eth0 and the switch port ${NETNS_PREFIX}p$I as TAP interfaces joined
# by lib/slow_link.py (no limits until netns_shape).
netns_start_relay() {
  local i=$1 t
  echo "0 0" >"$WORK/slow_link.ctl"
  "$PY" "$(dirname "${BASH_SOURCE[0]}")/slow_link.py" "$(netns_name "$i")" eth0 "${NETNS_PREFIX}sw" \
    "${NETNS_PREFIX}p$i" "$WORK/slow_link.ctl" >"$WORK/slow_link.log" 2>&1 &
  NETNS_RELAY_PID=$!
  disown "$NETNS_RELAY_PID"  # netns_cleanup kills it with the switch's processes; no job notice
  for t in $(seq 100); do
    grep -q ready "$WORK/slow_link.log" 2>/dev/null && return 0
    kill -0 "$NETNS_RELAY_PID" 2>/dev/null || break
    sleep 0.05
  done
  die "the user-space link for host $i did not start: $(cat "$WORK/slow_link.log")"
}

# netns_shape I DELAY_MS RATE_MBIT: host I's link (both directions) gets a one-way delay and a
# bandwidth limit (0: none); "netns_shape I 0 0" removes both.
netns_shape() {
  local i=$1 delay=$2 rate=$3 spec=() dev
  if [ "$NETNS_SHAPER" = relay ]; then
    echo "$delay $rate" >"$WORK/slow_link.ctl"
    kill -USR1 "$NETNS_RELAY_PID"
    return
  fi
  [ "$delay" = 0 ] || spec+=(delay "${delay}ms")
  [ "$rate" = 0 ] || spec+=(rate "${rate}mbit")
  for dev in "$(netns_name "$i") eth0" "${NETNS_PREFIX}sw ${NETNS_PREFIX}p$i"; do
    set -- $dev
    ip netns exec "$1" tc qdisc del dev "$2" root 2>/dev/null || true
    ((${#spec[@]} == 0)) || ip netns exec "$1" tc qdisc add dev "$2" root netem "${spec[@]}" limit 10000 ||
      die "tc netem ${spec[*]} on $2 failed"
  done
}
