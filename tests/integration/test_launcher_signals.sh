#!/usr/bin/env bash
# label: integration
# timeout: 420
# cost: 45
# Stop signals that reach Open MPI's mpirun itself, not only the ranks or the job script (docs/hpc.md,
# Signals and Failure modes). mpirun does not forward SIGTERM, SIGINT or SIGHUP: it aborts the job
# (SIGTERM to the ranks after odls_base_sigkill_timeout, SIGKILL after twice that) and exits 1,
# whatever the ranks did. Checked:
#   1. plain mpirun, SIGTERM to mpirun: exit 1, as docs/hpc.md tells users of plain mpirun;
#   2. jobs/local/run.sh, SIGTERM to its mpirun (a batch system or a user signalling the launcher):
#      exit 75 with <output>.ckpt and <output>.partial, and run again it resumes to the uninterrupted
#      result; when the run completes before mpirun's SIGTERM reaches the ranks, exit 0;
#   3. jobs/local/run.sh, Ctrl-C (SIGINT to the script's whole process group, as a terminal sends it):
#      exit 75 with a checkpoint;
#   4. jobs/local/sweep.sh, Ctrl-C during its first task: exit 75, the second task not started.
# Every run pauses 300 ms after each round (test-only fault), so that the signal lands mid-run and
# 40 rounds (12 s) outlast mpirun's delay. Open MPI 4.1's mpirun, once it aborts a job (a stop signal
# to mpirun itself, or a rank that exits non-zero, such as 75), sleeps odls_base_sigkill_timeout
# before its SIGTERM to the ranks and as long again before its SIGKILL, whether the ranks are gone or
# not, so every such run costs twice that delay. Where the ranks must stop on mpirun's SIGTERM (1, 2)
# it is 3 s, three times what they take to finish the pause, the round and the checkpoint on a loaded
# 2-core machine (0.6-1.0 s at load 8); where the script forwards the signal (3, 4) it is the suite's
# 0 (tests/CMakeLists.txt), under which a Ctrl-C that reached mpirun as well would kill the ranks
# before any checkpoint.
TEST_NAME=test_launcher_signals
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
cd "$WORK"
J=$FEDSILO_SOURCE_DIR/jobs/local
export FEDSILO_EXE FEDSILO_OUT=$WORK/out FEDSILO_RANKS=2
ABORT_DELAY=3 # OMPI_MCA_odls_base_sigkill_timeout for the signals to mpirun (see above)
cat >tiny.ini <<'INI'
dataset = fashion_mnist
model = mlp
clients = 4
rounds = 40
[model]
hidden = 32
[partition]
samples_per_client = 100
INI
mkdir -p out

# launcher_of PID: the mpirun started by the job script PID (its child).
launcher_of() {
  local kid
  for kid in $(pgrep -P "$1" || true); do
    case "$(ps -o comm= -p "$kid")" in mpirun | orterun | mpiexec) echo "$kid" && return 0 ;; esac
  done
  return 1
}

# expect_interrupted WHAT RC OUTPUT LOG: the run stopped with exit 75 and left what --resume needs.
expect_interrupted() {
  local what=$1 rc=$2 out=$3 logf=$4
  if [ "$rc" = 75 ] && [ -f "$out.ckpt" ] && [ -f "$out.partial" ] && [ ! -e "$out" ]; then
    log "$what: exit 75, $out.ckpt and .partial left"
    return 0
  fi
  fail "$what: exit $rc (expected 75), checkpoint $([ -f "$out.ckpt" ] && echo present || echo missing): $(tail -3 "$logf")"
  return 1
}

"$J/run.sh" tiny.ini --output out/ref.h5 >ref.log 2>&1 || die "run.sh (reference) failed: $(tail -3 ref.log)"

# stop_after_first_round HOW LOG CMD...: runs CMD (300 ms after each round) with output to LOG and,
# once its first round line is out, signals it: HOW=mpirun: SIGTERM to CMD, which is mpirun;
# HOW=launcher: SIGTERM to the mpirun that the job script CMD started; HOW=ctrl-c: SIGINT to the process
# group CMD leads (set -m: its own group, and SIGINT not ignored, as for an interactive shell's
# foreground job). Sets RC to CMD's exit status.
stop_after_first_round() {
  local how=$1 logf=$2 pid launcher
  shift 2
  [ "$how" = ctrl-c ] && set -m
  FEDSILO_FAULT=slow:rank=0,ms=300 "$@" >"$logf" 2>&1 &
  pid=$!
  set +m
  if ! wait_for_line 'round +global_acc' "$logf" 120 "$pid"; then
    fail "$*: no round line: $(tail -3 "$logf")"
  elif [ "$how" = mpirun ]; then
    kill -TERM "$pid"
  elif [ "$how" = ctrl-c ]; then
    kill -INT -- "-$pid"
  elif launcher=$(launcher_of "$pid"); then
    kill -TERM "$launcher"
  else
    fail "$*: no mpirun child"
  fi
  RC=0
  wait "$pid" || RC=$?
}

# 1. Plain mpirun, SIGTERM to mpirun.
OMPI_MCA_odls_base_sigkill_timeout=$ABORT_DELAY stop_after_first_round mpirun plain.log \
  "$MPIEXEC" -n 2 "$FEDSILO_EXE" --config tiny.ini --output out/plain.h5
if [ "$RC" = 1 ]; then
  log "plain mpirun, SIGTERM to mpirun: exit 1 (checkpoint $([ -f out/plain.h5.ckpt ] && echo written || echo not written))"
else
  fail "plain mpirun, SIGTERM to mpirun: exit $RC; docs/hpc.md says Open MPI's mpirun exits 1: $(tail -3 plain.log)"
fi

# 2. run.sh, SIGTERM to its mpirun; then run again: resumed, equal to the reference.
OMPI_MCA_odls_base_sigkill_timeout=$ABORT_DELAY stop_after_first_round launcher term.log \
  "$J/run.sh" tiny.ini --output out/term.h5
if expect_interrupted "run.sh, SIGTERM to its mpirun" "$RC" out/term.h5 term.log; then
  rc=0
  "$J/run.sh" tiny.ini --output out/term.h5 >term2.log 2>&1 || rc=$?
  if [ "$rc" != 0 ] || ! grep -q '^resuming from' term2.log; then
    fail "run.sh again: exit $rc, not resumed: $(tail -3 term2.log)"
  fi
  if h5_same out/ref.h5 out/term.h5; then
    log "run.sh again: resumed, equal to the uninterrupted run"
  else
    fail "run.sh: resumed after SIGTERM to mpirun, differs from the uninterrupted run"
  fi
fi

# 2b. run.sh, SIGTERM to its mpirun in a run that completes before mpirun's SIGTERM reaches the ranks
# (6 s for its 3 rounds, which publish the results file 1.3-1.7 s after the signal at load 9): exit 0,
# the complete results file, no checkpoint.
OMPI_MCA_odls_base_sigkill_timeout=6 stop_after_first_round launcher done.log \
  "$J/run.sh" tiny.ini --rounds 3 --output out/done.h5
if [ "$RC" = 0 ] && h5_complete out/done.h5 && [ ! -e out/done.h5.ckpt ]; then
  log "run.sh, SIGTERM to its mpirun, run completed anyway: exit 0"
else
  fail "run.sh, SIGTERM to its mpirun, run completed anyway: exit $RC (expected 0): $(tail -3 done.log)"
fi

# 3. run.sh, Ctrl-C.
stop_after_first_round ctrl-c int.log "$J/run.sh" tiny.ini --output out/int.h5
expect_interrupted "run.sh, Ctrl-C (SIGINT to its process group)" "$RC" out/int.h5 int.log || true

# 4. sweep.sh, Ctrl-C during the first of two tasks.
printf 'tiny.ini fedavg 0\ntiny.ini fedavg 1\n' >m.txt
stop_after_first_round ctrl-c sweep.log "$J/sweep.sh" m.txt
expect_interrupted "sweep.sh, Ctrl-C in task 0" "$RC" out/tiny_fedavg_s0.h5 sweep.log || true
if grep -q '== task 1' sweep.log; then fail "sweep.sh went on to task 1 after Ctrl-C"; else log "sweep.sh: task 1 not started"; fi
finish
