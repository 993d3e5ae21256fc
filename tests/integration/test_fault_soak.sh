#!/usr/bin/env bash
# label: integration
# timeout: 600
# cost: 32
# Fault soak: many random stop / crash / resume cycles on one run, which must end in a results file
# identical to the uninterrupted run. Each cycle starts `fedsilo --resume` at a random rank count
# (1-4) and checkpoint.every (0-2), waits a random 0.1-1.6 s after its first round line and then
# either sends SIGTERM to the ranks or SIGUSR1 to mpirun or the ranks (exit 75 with checkpoint and
# partial file, or 0 when the run had finished), or SIGKILL to one rank or all of them (a crash:
# mpirun exits non-zero, no results file unless the kill came after the run had published it).
# Every cycle must end within 15 s of its signal, and no cycle may publish an incomplete or different
# results file. A run that completes is compared with
# the uninterrupted one and the next cycle starts a fresh run ("episode"); after the last cycle the
# run in progress is resumed to its end and compared.
#   FEDSILO_SOAK_CYCLES  cycles (default 6, well under a minute; test_fault_soak_long runs 100)
#   FEDSILO_SOAK_SEED    the seed of the random choices (default: from the clock; always printed, so
#                        a failing sequence of choices can be replayed; the moments the signals land
#                        also depend on the machine's load)
TEST_NAME=test_fault_soak
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
CYCLES=${FEDSILO_SOAK_CYCLES:-6}
SEED=${FEDSILO_SOAK_SEED:-$(($(date +%s%N) % 1000000))}
RANDOM=$SEED
EXIT_LIMIT_S=15
ROUNDS=10
A=("${TINY[@]}" --rounds "$ROUNDS" --seed 7)
OUT="$WORK/soak.h5"
log "seed $SEED (replay the choices with FEDSILO_SOAK_SEED=$SEED), $CYCLES cycles"

T_START=$(now_ms)
"$MPIEXEC" -n 2 "$FEDSILO_EXE" "${A[@]}" --output "$WORK/ref.h5" >"$WORK/ref.log" 2>&1 ||
  die "the uninterrupted run failed: $(tail -3 "$WORK/ref.log")"

ACTIONS=(term-ranks usr1-mpirun usr1-ranks kill-one-rank kill-all-ranks)
declare -A DONE=()
EPISODES=0
MAX_LATENCY=0

# episode_complete WHAT: the run finished; its file must equal the uninterrupted run. Starts afresh.
episode_complete() {
  local what=$1
  if [ -e "$OUT.ckpt" ] || [ -e "$OUT.partial" ]; then fail "$what: checkpoint or partial file left after exit 0"; fi
  if h5_complete "$OUT" && h5_same "$WORK/ref.h5" "$OUT"; then
    EPISODES=$((EPISODES + 1))
    log "$what: run complete, identical to the uninterrupted run (episode $EPISODES)"
  else
    fail "$what: the completed run's results differ from the uninterrupted run (above)"
  fi
  rm -f "$OUT" "$OUT.ckpt" "$OUT.partial" "$OUT.ckpt.tmp"
}

# signal_run ACTION MPIRUN_PID: delivers the cycle's fault.
signal_run() {
  local action=$1 pid=$2 kids
  kids=($(pgrep -P "$pid" || true))
  ((${#kids[@]} > 0)) || return 1
  case $action in
    term-ranks) kill -TERM "${kids[@]}" ;;
    usr1-mpirun) kill -USR1 "$pid" ;;  # Open MPI forwards SIGUSR1 to every rank
    usr1-ranks) kill -USR1 "${kids[@]}" ;;
    kill-one-rank) kill -KILL "${kids[RANDOM % ${#kids[@]}]}" ;;
    kill-all-ranks) kill -KILL "${kids[@]}" ;;
  esac 2>/dev/null
}

# check_cycle WHAT ACTION RC LOG: the outcome a cycle's fault allows.
check_cycle() {
  local what=$1 action=$2 rc=$3 logf=$4
  if [ "$rc" = 0 ]; then
    episode_complete "$what (finished before the $action landed)"
    return
  fi
  if [ -e "$OUT" ]; then
    # The run had finished and published its file when the signal came. SIGKILL cannot be caught:
    # the launcher reports the kill, and the file must be complete and identical. A stop signal must
    # change nothing then (exit 0).
    case $action in
      kill-*) log "$what: killed after publishing (exit $rc)" ;;
      *)
        fail "$what: exit $rc, yet $OUT was published"
        tail -5 "$logf" >&2
        ;;
    esac
    episode_complete "$what (published, then exit $rc)"
    return
  fi
  case $action in
    term-* | usr1-*)
      if [ "$rc" != 75 ]; then
        fail "$what: exit $rc, expected 75 (or 0)"
        tail -5 "$logf" >&2
      else
        [ -f "$OUT.ckpt" ] && [ -f "$OUT.partial" ] || fail "$what: exit 75 without checkpoint and partial file"
      fi
      ;;
    kill-*)
      [ "$rc" != 75 ] || fail "$what: exit 75 after SIGKILL"
      if grep -q 'fedsilo: error' "$logf"; then fail "$what: an error after SIGKILL: $(grep -m1 'fedsilo: error' "$logf")"; fi
      ;;
  esac
}

for ((c = 1; c <= CYCLES; c++)); do
  np=$((1 + RANDOM % 4)) every=$((RANDOM % 3)) action=${ACTIONS[RANDOM % ${#ACTIONS[@]}]}
  delay_ms=$((100 + RANDOM % 1500))
  what="cycle $c: $action after $delay_ms ms at $np rank(s), checkpoint.every $every"
  logf="$WORK/cycle$c.log"
  # A test-only 150 ms pause after each round (the same on every rank) spreads the 10 rounds over
  # 1.5 s, so that the faults land in every phase: rounds, periodic checkpoints, start-up, the end.
  FEDSILO_FAULT=slow:rank=0,ms=150 "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "${A[@]}" --checkpoint.every "$every" \
    --output "$OUT" --resume >"$logf" 2>&1 &
  pid=$!
  rc=0
  if ! wait_for_line 'round +global_acc' "$logf" 120 "$pid"; then
    wait "$pid" || rc=$?
    if [ "$rc" = 0 ]; then
      episode_complete "$what (finished without a round line)"
    else
      fail "$what: exited $rc before its first round line"
      tail -5 "$logf" >&2
    fi
    continue
  fi
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  t0=$(now_ms)
  signal_run "$action" "$pid" || true
  wait "$pid" || rc=$?
  latency=$(($(now_ms) - t0))
  ((latency > MAX_LATENCY)) && MAX_LATENCY=$latency
  ((latency < EXIT_LIMIT_S * 1000)) || fail "$what: mpirun exited $latency ms after the signal (limit $EXIT_LIMIT_S s)"
  DONE[$action]=$((${DONE[$action]:-0} + 1))
  log "$what: exit $rc after $latency ms$(grep -o 'stopped before round [0-9]*' "$logf" | sed 's/^/, /' | head -1)"
  check_cycle "$what" "$action" "$rc" "$logf"
done

# The run in progress, if any, resumed to its end without faults.
if [ -e "$OUT.ckpt" ] || [ -e "$OUT.partial" ]; then
  np=$((1 + RANDOM % 4))
  rc=0
  "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "${A[@]}" --output "$OUT" --resume >"$WORK/final.log" 2>&1 || rc=$?
  if [ "$rc" = 0 ]; then
    episode_complete "final resume at $np rank(s)"
  else
    fail "final resume at $np rank(s): exit $rc"
    tail -5 "$WORK/final.log" >&2
  fi
fi
((EPISODES > 0)) || fail "no run was completed and compared"
total_s=$((($(now_ms) - T_START) / 1000))
counts=$(for a in "${ACTIONS[@]}"; do printf '%s %s, ' "$a" "${DONE[$a]:-0}"; done)
log "seed $SEED: $CYCLES cycles (${counts%, }), $EPISODES runs completed identical, slowest exit after a signal $MAX_LATENCY ms, $total_s s in all"
finish
