#!/usr/bin/env bash
# label: integration
# timeout: 1200
# cost: 150
# Kill-and-resume: an uninterrupted run at 2 ranks; the same run stopped by SIGTERM sent to its ranks
# (exit 75, <output>.ckpt and <output>.partial left, no <output>); resumed with --resume at 3 ranks; the
# finished file must equal the uninterrupted one in every dataset but wall times and the rank placement
# (client accuracies per round, summary, final model, sensitivity, the algorithm's own records).
# Which algorithms: RESUME_ALGORITHMS=core (this test, the default run) takes fedavg, ditto and playerfl
# (REQUIRED), gems (a fixed number of rounds) and average (one-shot); RESUME_ALGORITHMS=registry
# (test_resume_registry, label long) takes EVERY algorithm of the registry (parsed from --help, so
# algorithms added later are covered without editing this file) and nothing else.
# An algorithm with a fixed number of rounds >= 2 ("needs rounds = N") runs that many; ALG_ARGS gives
# an algorithm the settings it needs to run more than one round (gems: one hidden layer -> its
# neuron-wise 2-round protocol). The test FAILS unless every algorithm it takes was killed, resumed and
# compared, except those listed in ONE_SHOT with their reason; for them the reason is checked: fedsilo
# rejects rounds = 6 with "needs rounds = 1", and a SIGTERM during their only round changes nothing
# (exit 0, no checkpoint, a result identical to the uninterrupted run). A new algorithm that can be
# neither makes the registry test fail until it is given settings here or listed with its reason.
# The core run also kills and resumes the protocol options that keep state across rounds: FedOpt's adam
# moments (rank 0's state, broadcast into the checkpoint) with best-validation selection and its kept
# client models, on fedavg, and the momentum optimizer with after-local evaluation on playerfl. Ditto on
# clients of uneven sizes crosses two placements that are not contiguous ranges (checked), at 2 and 3
# ranks. fedavg also covers: SIGUSR1 to mpirun (forwarded), a hard kill (SIGKILL) after a periodic
# checkpoint (the partial file is rebuilt from the checkpoint), a resume with a different
# configuration (exit 2) and --resume without a checkpoint (starts over).
SCOPE=${RESUME_ALGORITHMS:-core}
case $SCOPE in core | registry) ;; *) echo "RESUME_ALGORITHMS=$SCOPE: expected core or registry" >&2; exit 2 ;; esac
TEST_NAME=test_resume_$SCOPE
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir

BASE=("${TINY[@]}" --model.hidden 32,32 --seed 5)
ROUNDS=6

# run_to LOG NP ARGS...: runs fedsilo under mpirun, output to LOG; sets RC.
run_to() {
  local logf=$1 np=$2
  shift 2
  RC=0
  "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "$@" >"$logf" 2>&1 || RC=$?
}

# interrupt LOG SIG HOW ARGS...: starts a 2-rank run and, once its header line is out (handlers are
# installed before the data is loaded), sends SIG to the ranks (HOW=ranks) or to mpirun (HOW=mpirun).
interrupt() {
  local logf=$1 sig=$2 how=$3
  shift 3
  # A 300 ms pause after each round (test-only fault) so that the signal lands mid-run even for
  # algorithms whose tiny rounds take a millisecond; results do not depend on it.
  FEDSILO_FAULT=slow:rank=0,ms=300 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "$@" >"$logf" 2>&1 &
  local pid=$!
  if wait_for_line 'round +global_acc' "$logf" 120 "$pid"; then
    if [ "$how" = mpirun ]; then kill -"$sig" "$pid"; else signal_ranks "$sig" "$pid" || true; fi
  fi
  RC=0
  wait "$pid" || RC=$?
}

check_interrupted() {  # OUT LOG: exit 75, checkpoint and partial left, no results file
  local out=$1 logf=$2 what=$3
  if [ "$RC" != 75 ]; then
    fail "$what: interrupted run exited $RC, expected 75"
    tail -5 "$logf" >&2
    return 1
  fi
  grep -q 'resume with --resume\|run again with --resume' "$logf" || fail "$what: no 'run again with --resume' message"
  [ -f "$out.ckpt" ] || { fail "$what: no checkpoint $out.ckpt after the stop"; return 1; }
  [ -f "$out.partial" ] || fail "$what: no $out.partial after the stop"
  [ ! -e "$out" ] || fail "$what: $out exists after the stop (must only appear when complete)"
  return 0
}

check_resumed() {  # OUT LOG REF WHAT
  local out=$1 logf=$2 ref=$3 what=$4
  if [ "$RC" != 0 ]; then
    fail "$what: resumed run exited $RC"
    tail -5 "$logf" >&2
    return 1
  fi
  grep -q '^resuming from' "$logf" || fail "$what: the resumed run did not say it resumed"
  [ ! -e "$out.ckpt" ] || fail "$what: checkpoint left after the run completed"
  [ ! -e "$out.partial" ] || fail "$what: partial file left after the run completed"
  if ! h5_complete "$out"; then
    fail "$what: resumed results file incomplete"
    return 1
  fi
  if ! h5_same "$ref" "$out"; then
    fail "$what: resumed results differ from the uninterrupted run (above)"
    return 1
  fi
  log "$what: identical to the uninterrupted run"
}

# Settings an algorithm needs to run (and so to be stopped and resumed) for more than one round.
declare -A ALG_ARGS=(
  [gems]="--model.hidden 32" # an mlp with one hidden layer: neuron-wise GEMS, rounds = 2
)
# Algorithms that run exactly one round whatever their settings: a stop request is only acted on
# between rounds (after the last round it changes nothing), so there is nothing to resume.
ONE_SHOT_REASON="one-shot (rounds = 1): a stop is acted on between rounds only, so the run completes; nothing to resume"
declare -A ONE_SHOT=(
  [average]=$ONE_SHOT_REASON
  [ensemble]=$ONE_SHOT_REASON
  [oneshot_local]=$ONE_SHOT_REASON
  [global]=$ONE_SHOT_REASON
  [public_only]=$ONE_SHOT_REASON
)
REQUIRED=(fedavg ditto playerfl)

REGISTRY=$(algorithms)
[ -n "$REGISTRY" ] || die "no algorithms parsed from '$FEDSILO_EXE --help'"
if [ "$SCOPE" = registry ]; then
  ALGS=$REGISTRY
else
  ALGS=$(printf '%s\n' "${REQUIRED[@]}" gems average)
fi
log "algorithms: $(echo $ALGS)"
for alg in "${REQUIRED[@]}" "${!ONE_SHOT[@]}" "${!ALG_ARGS[@]}"; do
  grep -qx "$alg" <<<"$REGISTRY" || fail "$alg is named in this test but is not in the registry"
done
declare -A RESULT=() # algorithm -> resumed | one-shot; absent = neither (a failure was reported)

# check_one_shot ALG DIR ARGS...: the one-shot reason holds: the run at 1 round, stopped by SIGTERM
# while in its only round, completes (exit 0, no checkpoint) identical to the uninterrupted run.
check_one_shot() {
  local alg=$1 d=$2
  shift 2
  grep -q 'needs rounds = 1\b' "$d/ref.log" ||
    { fail "$alg: listed as one-shot, but rounds = $ROUNDS is not rejected with 'needs rounds = 1': $(grep -m1 error "$d/ref.log")"; return 1; }
  run_to "$d/ref1.log" 2 "$@" --rounds 1 --output "$d/ref.h5"
  [ "$RC" = 0 ] || { fail "$alg: the 1-round run exited $RC"; tail -5 "$d/ref1.log" >&2; return 1; }
  interrupt "$d/int.log" TERM ranks "$@" --rounds 1 --output "$d/run.h5"
  [ "$RC" = 0 ] || { fail "$alg (one-shot, SIGTERM in its only round): exited $RC, expected 0"; tail -5 "$d/int.log" >&2; return 1; }
  [ ! -e "$d/run.h5.ckpt" ] && [ ! -e "$d/run.h5.partial" ] || fail "$alg (one-shot, SIGTERM): checkpoint or partial file left"
  h5_complete "$d/run.h5" && h5_same "$d/ref.h5" "$d/run.h5" ||
    { fail "$alg (one-shot, SIGTERM): result incomplete or different from the uninterrupted run"; return 1; }
  log "not resumed: $alg: ${ONE_SHOT[$alg]} (checked: rounds = $ROUNDS rejected, SIGTERM in round 0 -> exit 0, identical result)"
}

for alg in $ALGS; do
  d="$WORK/$alg"
  mkdir -p "$d"
  rounds=$ROUNDS
  # shellcheck disable=SC2206 # ALG_ARGS values are option lists, split on whitespace
  A=("${BASE[@]}" ${ALG_ARGS[$alg]:-} --algorithm "$alg")
  run_to "$d/ref.log" 2 "${A[@]}" --rounds "$rounds" --output "$d/ref.h5"
  if [ -n "${ONE_SHOT[$alg]:-}" ]; then
    if [ "$RC" = 0 ]; then
      fail "$alg: listed in ONE_SHOT ('${ONE_SHOT[$alg]}') but runs $ROUNDS rounds: remove it from the list"
    elif [ "$RC" != 2 ]; then
      fail "$alg: the run at rounds = $ROUNDS exited $RC, expected 2 ('needs rounds = 1')"
      tail -5 "$d/ref.log" >&2
    elif check_one_shot "$alg" "$d" "${A[@]}"; then
      RESULT[$alg]=one-shot
    fi
    continue
  fi
  if [ "$RC" = 2 ]; then
    # An algorithm with a fixed number of rounds says "needs rounds = N".
    need=$(sed -n 's/.*needs rounds = \([0-9]*\).*/\1/p' "$d/ref.log" | head -1)
    if [ -n "$need" ] && [ "$need" -ge 2 ]; then
      rounds=$need
      run_to "$d/ref.log" 2 "${A[@]}" --rounds "$rounds" --output "$d/ref.h5"
    fi
  fi
  if [ "$RC" != 0 ]; then
    fail "$alg: the uninterrupted run exited $RC: $(grep -m1 'fedsilo: error' "$d/ref.log" || tail -1 "$d/ref.log") (give it the settings it needs in ALG_ARGS, or, if it cannot run more than one round, list it in ONE_SHOT with the reason)"
    continue
  fi
  interrupt "$d/int.log" TERM ranks "${A[@]}" --rounds "$rounds" --output "$d/run.h5"
  check_interrupted "$d/run.h5" "$d/int.log" "$alg (SIGTERM, $rounds rounds)" || continue
  stopped=$(sed -n 's/.*stopped before round \([0-9]*\).*/\1/p' "$d/int.log" | head -1)
  run_to "$d/res.log" 3 "${A[@]}" --rounds "$rounds" --output "$d/run.h5" --resume
  check_resumed "$d/run.h5" "$d/res.log" "$d/ref.h5" "$alg (stopped before round $stopped of $rounds at 2 ranks, resumed at 3)" &&
    RESULT[$alg]=resumed
done
for alg in "${REQUIRED[@]}"; do
  [ "${RESULT[$alg]:-}" = resumed ] || fail "$alg (required) was not killed, resumed and compared identical"
done
missing=()
for alg in $ALGS; do [ -n "${RESULT[$alg]:-}" ] || missing+=("$alg"); done
log "killed, resumed, identical: $(for a in $ALGS; do [ "${RESULT[$a]:-}" = resumed ] && printf '%s ' "$a"; done)"
log "one-shot, checked: $(for a in $ALGS; do [ "${RESULT[$a]:-}" = one-shot ] && printf '%s ' "$a"; done)"
((${#missing[@]} == 0)) || fail "neither resumed nor a checked one-shot: ${missing[*]}"
# The registry-wide sweep is all the long test does; the rest is the core run's.
[ "$SCOPE" = core ] || { finish; exit 0; }

# ---- protocol state: server optimizer moments (with FedFa's own server momentum too), client optimizer --
# ---- moments kept across rounds (AdamW, SGD with Nesterov momentum), schedules, best-validation -------
# ---- selection and its snapshots, and eval.global = end (the global model evaluated in the last round only)
declare -A PROTOCOL=(
  [fedavg_adam_best_val]="--algorithm fedavg --fl.server_optimizer adam --fl.server_lr 0.02 --eval.select best_val --output.client_models true --eval.global end"
  [playerfl_momentum_after_local]="--algorithm playerfl --model.hidden 32,16 --fl.server_optimizer momentum --eval.point after_local --eval.select best_val --eval.select_metric loss"
  [qffl_yogi]="--algorithm qffl --fl.server_optimizer yogi --fl.server_lr 0.02"
  [fedfa_adagrad_own_momentum]="--algorithm fedfa --fl.server_optimizer adagrad --fl.server_lr 0.05 --fedfa.server_momentum 0.5"
  [fedavg_adamw_keep_exponential]="--algorithm fedavg --train.optimizer adamw --train.lr 0.003 --train.weight_decay 0.01 --train.optimizer_state keep --train.lr_schedule exponential --train.lr_gamma 0.8"
  [fedbabu_nesterov_keep_step]="--algorithm fedbabu --fedbabu.head fc3 --train.momentum 0.9 --train.nesterov true --train.optimizer_state keep --train.lr_schedule step --train.lr_step_rounds 2 --train.lr_gamma 0.5 --eval.client_weighting samples"
  # clients of uneven sizes: the placement by samples gives the ranks clients that are not adjacent
  [ditto_uneven_clients]="--algorithm ditto --dataset synthetic --clients 9 --partition.samples_per_client 0 --eval.select best_val --output.client_models true"
)
for name in "${!PROTOCOL[@]}"; do
  d="$WORK/$name"
  mkdir -p "$d"
  # shellcheck disable=SC2206 # option lists, split on whitespace
  A=("${BASE[@]}" ${PROTOCOL[$name]} --rounds "$ROUNDS")
  run_to "$d/ref.log" 2 "${A[@]}" --output "$d/ref.h5"
  [ "$RC" = 0 ] || { fail "$name: the uninterrupted run exited $RC: $(grep -m1 'fedsilo: error' "$d/ref.log")"; continue; }
  interrupt "$d/int.log" TERM ranks "${A[@]}" --output "$d/run.h5"
  check_interrupted "$d/run.h5" "$d/int.log" "$name (SIGTERM)" || continue
  stopped=$(sed -n 's/.*stopped before round \([0-9]*\).*/\1/p' "$d/int.log" | head -1)
  run_to "$d/res.log" 3 "${A[@]}" --output "$d/run.h5" --resume
  check_resumed "$d/run.h5" "$d/res.log" "$d/ref.h5" "$name (stopped before round $stopped at 2 ranks, resumed at 3)"
done
# The uneven clients' runs must have crossed placements that are not contiguous ranges, or the resume
# above proves nothing about them.
"$PY" - "$WORK/ditto_uneven_clients/ref.h5" "$WORK/ditto_uneven_clients/run.h5" <<'PYEOF' ||
import sys, h5py, numpy as np
for p in sys.argv[1:]:
    r = h5py.File(p, "r")["clients/rank"][:]
    print(p.split("/")[-1], "clients/rank:", list(r))
    if np.all(np.diff(r) >= 0):
        sys.exit(1)
PYEOF
  fail "ditto_uneven_clients: the placement by samples gave contiguous ranges at 2 or 3 ranks"

# ---- fedavg: the other ways in and out ------------------------------------------------------------
d="$WORK/fedavg"
F=("${BASE[@]}" --algorithm fedavg --rounds "$ROUNDS")
if [ -f "$d/ref.h5" ]; then
  # SIGUSR1 to mpirun: Open MPI forwards it to every rank.
  interrupt "$d/usr1.log" USR1 mpirun "${F[@]}" --output "$d/usr1.h5"
  if check_interrupted "$d/usr1.h5" "$d/usr1.log" "fedavg (SIGUSR1 to mpirun)"; then
    run_to "$d/usr1-res.log" 1 "${F[@]}" --output "$d/usr1.h5" --resume
    check_resumed "$d/usr1.h5" "$d/usr1-res.log" "$d/ref.h5" "fedavg (SIGUSR1 to mpirun, resumed at 1 rank)"
  fi

  # Hard kill after a periodic checkpoint: the partial file was still being written, so the resume
  # must rebuild it from the rows kept in the checkpoint. The test-only per-round pause keeps the run
  # from finishing (and removing its checkpoint) before the kill lands.
  FEDSILO_FAULT=slow:rank=0,ms=300 "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${F[@]}" --checkpoint.every 2 --output "$d/kill.h5" >"$d/kill.log" 2>&1 &
  pid=$!
  if wait_for_line '^checkpoint before round 2' "$d/kill.log" 120 "$pid"; then
    signal_ranks KILL "$pid" || true
  fi
  RC=0
  wait "$pid" || RC=$?
  if [ "$RC" = 0 ] || [ -f "$d/kill.h5" ]; then
    fail "fedavg (SIGKILL): finished before the kill (exit $RC)"
  elif [ ! -f "$d/kill.h5.ckpt" ]; then
    fail "fedavg (SIGKILL): no periodic checkpoint $d/kill.h5.ckpt"
  else
    # A resume with a different configuration is refused (exit 2) and leaves the checkpoint alone.
    run_to "$d/cfg-res.log" 2 "${BASE[@]}" --algorithm fedavg --rounds "$ROUNDS" --seed 6 --output "$d/kill.h5" --resume
    [ "$RC" = 2 ] || fail "resume with another seed exited $RC, expected 2"
    grep -q 'fedsilo: error: --resume: .*seed = 5, this run has seed = 6' "$d/cfg-res.log" ||
      fail "resume with another seed: message does not name seed: $(grep error "$d/cfg-res.log" | head -1)"
    [ -f "$d/kill.h5.ckpt" ] || fail "a refused resume removed the checkpoint"
    run_to "$d/kill-res.log" 2 "${F[@]}" --checkpoint.every 2 --output "$d/kill.h5" --resume
    grep -q 'rebuilt from the checkpoint' "$d/kill-res.log" || fail "fedavg (SIGKILL): the partial file was not rebuilt"
    check_resumed "$d/kill.h5" "$d/kill-res.log" "$d/ref.h5" "fedavg (SIGKILL after a periodic checkpoint, partial rebuilt)"
  fi

  # --resume without a checkpoint starts from round 0 and completes.
  run_to "$d/fresh.log" 2 "${F[@]}" --output "$d/fresh.h5" --resume
  [ "$RC" = 0 ] || fail "--resume without a checkpoint exited $RC"
  grep -q 'no checkpoint' "$d/fresh.log" || fail "--resume without a checkpoint: no 'no checkpoint' note"
  h5_same "$d/ref.h5" "$d/fresh.h5" || fail "--resume without a checkpoint: results differ"
fi
finish
