#!/usr/bin/env bash
# label: integration
# timeout: 600
# cost: 32
# Algorithm-scoped INI sections end to end: one file trains fedavg with Adam (AMSGrad, weight decay,
# moments kept per client) from [train] and pfedme with plain SGD from [train @ pfedme].
#   * each run equals the run of the same file without the scoped section and the scoped keys on the
#     command line (results and --dry-run's resolved configuration), so the section changes exactly
#     what those options would;
#   * each gives identical results at 1 and 2 ranks;
#   * pfedme from the file without its section refuses Adam (exit 2), so the section is what lets it run;
#   * a bad key in the section of an algorithm that does not run stops fedavg (exit 2, one error line
#     naming the file, the section and the key, no results file).
TEST_NAME=test_scoped_sections
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir

PLAIN="[train]
optimizer = adam
amsgrad = true
weight_decay = 1e-4
optimizer_state = keep
lr = 0.003
batch = 16
"
SCOPED="[train @ pfedme]
# pfedme's update is its own inner SGD: it refuses another client optimizer
optimizer = sgd
amsgrad = false
weight_decay = 0
optimizer_state = reset
lr = 0.05
"
printf '%s' "$PLAIN" >"$WORK/plain.ini"
printf '%s\n%s' "$PLAIN" "$SCOPED" >"$WORK/scoped.ini"
PFEDME_CLI=(--train.optimizer sgd --train.amsgrad false --train.weight_decay 0 --train.optimizer_state reset
  --train.lr 0.05)
BASE=("${TINY[@]}" --seed 3 --rounds 3 --data.limit 2000 --pfedme.inner_steps 2)

run_to() {  # LOG NP ARGS...: sets RC
  local logf=$1 np=$2
  shift 2
  RC=0
  "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "$@" >"$logf" 2>&1 || RC=$?
}

for alg in fedavg pfedme; do
  extra=()
  [ "$alg" = pfedme ] && extra=("${PFEDME_CLI[@]}")
  A=("${BASE[@]}" --algorithm "$alg")
  d="$WORK/$alg"
  mkdir -p "$d"
  for np in 1 2; do
    run_to "$d/np$np.log" "$np" --config "$WORK/scoped.ini" "${A[@]}" --output "$d/np$np.h5"
    [ "$RC" = 0 ] || { fail "$alg np=$np exited $RC: $(grep -m1 error "$d/np$np.log")"; continue 2; }
  done
  h5_same "$d/np1.h5" "$d/np2.h5" && log "$alg: np 2 identical to np 1" || fail "$alg: np 2 differs from np 1"
  run_to "$d/cli.log" 2 --config "$WORK/plain.ini" "${A[@]}" "${extra[@]}" --output "$d/cli.h5"
  if [ "$RC" = 0 ] && h5_same "$d/np1.h5" "$d/cli.h5"; then
    log "$alg: the scoped file's run equals the plain file with ${#extra[@]} option words on the command line"
  else
    fail "$alg: the scoped file's run differs from its command-line equivalent (exit $RC)"
  fi
  "$FEDSILO_EXE" --config "$WORK/scoped.ini" "${A[@]}" --output o.h5 --dry-run >"$d/dry_scoped.ini" 2>&1 || true
  "$FEDSILO_EXE" --config "$WORK/plain.ini" "${A[@]}" "${extra[@]}" --output o.h5 --dry-run >"$d/dry_cli.ini" 2>&1 ||
    true
  want=adam
  [ "$alg" = pfedme ] && want=sgd
  if cmp -s "$d/dry_scoped.ini" "$d/dry_cli.ini" && grep -qx "optimizer = $want" "$d/dry_scoped.ini"; then
    log "$alg: --dry-run resolves optimizer = $want, as the command line would"
  else
    fail "$alg: --dry-run differs from the command line's: $(diff "$d/dry_scoped.ini" "$d/dry_cli.ini" | head -3)"
  fi
done

# Without its section pfedme refuses the file's Adam.
run_to "$WORK/refuse.log" 1 --config "$WORK/plain.ini" "${BASE[@]}" --algorithm pfedme --output "$WORK/refuse.h5"
if [ "$RC" = 2 ] && grep -q "train.optimizer = adam" "$WORK/refuse.log"; then
  log "pfedme without its section: $(grep -m1 '^fedsilo: error' "$WORK/refuse.log")"
else
  fail "pfedme ran from the plain file with Adam (exit $RC)"
fi

# A bad key in another algorithm's section: exit 2 at every rank count, one line, nothing written.
printf '%s\n%s\nmomentun = 0.9\n' "$PLAIN" "$SCOPED" >"$WORK/bad.ini"
run_to "$WORK/bad.log" 2 --config "$WORK/bad.ini" "${BASE[@]}" --algorithm fedavg --output "$WORK/bad.h5"
lines=$(grep -c '^fedsilo: error' "$WORK/bad.log" || true)
if [ "$RC" = 2 ] && [ "$lines" = 1 ] && grep -q "bad.ini:[0-9]*: \[train @ pfedme\]: unrecognised option 'train.momentun'; did you mean 'train.momentum'?" \
  "$WORK/bad.log" && [ ! -e "$WORK/bad.h5" ] && [ ! -e "$WORK/bad.h5.partial" ]; then
  log "bad key in pfedme's section while running fedavg: $(grep '^fedsilo: error' "$WORK/bad.log")"
else
  fail "bad key in another algorithm's section: exit $RC, $lines error lines: $(grep -m1 error "$WORK/bad.log")"
fi
finish
