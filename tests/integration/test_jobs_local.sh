#!/usr/bin/env bash
# label: integration
# timeout: 600
# cost: 98
# The workstation job scripts (jobs/local/): run.sh stopped with SIGTERM (forwarded to mpirun as
# SIGUSR1) exits 75 with a checkpoint and, run again, resumes to the same result as an uninterrupted
# run; sweep.sh runs a 2-line manifest into one named file per line and skips finished tasks when run
# again, and runs the shipped example jobs/sweep.manifest (checked line by line, then run as shipped
# with shrunken copies of its configurations); scaling.sh writes mode,ranks,clients,seconds_per_round
# that `analysis plot scaling` reads, its weak runs give every client FEDSILO_WEAK_SAMPLES samples, and
# a weak run that cannot is left out. FEDSILO_MPIRUN_ARGS reaches mpirun in run.sh and sweep.sh.
# FEDSILO_SHARED=1 sweeps side by side run each task once; live claims are respected, stale ones taken over;
# sweeps.sh starts N of them, and SIGTERM stops them all resumably.
TEST_NAME=test_jobs_local
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
cd "$WORK"
J=$FEDSILO_SOURCE_DIR/jobs/local
export FEDSILO_EXE FEDSILO_OUT=$WORK/out FEDSILO_RANKS=2
cat >tiny.ini <<'INI'
dataset = fashion_mnist
model = mlp
clients = 4
rounds = 8
output = out/run.h5
[model]
hidden = 32
[partition]
samples_per_client = 100
INI

# run.sh: SIGTERM to the script -> USR1 to mpirun -> checkpoint, exit 75; again -> resume.
"$J/run.sh" tiny.ini --output out/ref.h5 >ref.log 2>&1 || fail "run.sh (reference) failed: $(tail -3 ref.log)"
# A test-only 300 ms pause after each round keeps the tiny run going until the signal lands.
FEDSILO_FAULT=slow:rank=0,ms=300 "$J/run.sh" tiny.ini >run1.log 2>&1 &
pid=$!
wait_for_line 'round +global_acc' run1.log 120 "$pid" && kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
if [ "$rc" != 75 ]; then
  fail "run.sh after SIGTERM exited $rc, expected 75: $(tail -3 run1.log)"
else
  [ -f out/run.h5.ckpt ] || fail "run.sh: no checkpoint after SIGTERM"
  rc=0
  "$J/run.sh" tiny.ini >run2.log 2>&1 || rc=$?
  [ "$rc" = 0 ] || fail "run.sh again exited $rc: $(tail -3 run2.log)"
  grep -q '^resuming from' run2.log || fail "run.sh again did not resume"
  h5_same out/ref.h5 out/run.h5 || fail "run.sh: resumed result differs from the uninterrupted run"
  log "run.sh: SIGTERM -> exit 75, rerun resumed to the same result"
fi

# sweep.sh
printf '# a comment\ntiny.ini fedavg 0 --rounds 2\n\ntiny.ini local 3 --rounds 2\n' >m.txt
"$J/sweep.sh" m.txt >sweep.log 2>&1 || fail "sweep.sh failed: $(tail -3 sweep.log)"
for f in tiny_fedavg_s0_rounds-2.h5 tiny_local_s3_rounds-2.h5; do
  h5_complete "out/$f" || fail "sweep.sh: out/$f missing or incomplete (have: $(ls out | tr '\n' ' '))"
done
"$J/sweep.sh" m.txt >sweep2.log 2>&1 || fail "sweep.sh (second time) failed"
[ "$(grep -c 'exists, skipped' sweep2.log)" = 2 ] || fail "sweep.sh did not skip the finished tasks"
log "sweep.sh: 2 tasks, 2 files; a second run skips them"

# FEDSILO_MPIRUN_ARGS reaches mpirun in both scripts: with "--bind-to none --report-bindings" mpirun
# reports both ranks unbound.
printf 'tiny.ini fedavg 5 --rounds 1\n' >unbound.txt
FEDSILO_MPIRUN_ARGS="--bind-to none --report-bindings" "$J/sweep.sh" unbound.txt >unbound_sweep.log 2>&1 ||
  fail "sweep.sh with FEDSILO_MPIRUN_ARGS failed: $(tail -3 unbound_sweep.log)"
FEDSILO_MPIRUN_ARGS="--bind-to none --report-bindings" "$J/run.sh" tiny.ini --rounds 1 --output out/unbound.h5 \
  >unbound_run.log 2>&1 || fail "run.sh with FEDSILO_MPIRUN_ARGS failed: $(tail -3 unbound_run.log)"
for f in unbound_sweep.log unbound_run.log; do
  [ "$(grep -c 'MCW rank [01] is not bound' "$f")" = 2 ] ||
    fail "$f: FEDSILO_MPIRUN_ARGS did not reach mpirun (no 'not bound' report for both ranks): $(head -3 "$f")"
done
log "FEDSILO_MPIRUN_ARGS: passed to mpirun by sweep.sh and run.sh"

# FEDSILO_SHARED=1: two one-rank sweeps of one manifest side by side run every task once (without the
# claims both would start task 0 and one would fail on the other's output lock).
printf 'tiny.ini fedavg 1 --rounds 2\ntiny.ini local 1 --rounds 2\ntiny.ini fedavg 2 --rounds 2\ntiny.ini local 2 --rounds 2\n' >shared.txt
export FEDSILO_MPIRUN_ARGS="--bind-to none"
FEDSILO_SHARED=1 FEDSILO_RANKS=1 "$J/sweep.sh" shared.txt >shared_a.log 2>&1 &
shared_a=$!
FEDSILO_SHARED=1 FEDSILO_RANKS=1 "$J/sweep.sh" shared.txt >shared_b.log 2>&1 &
shared_b=$!
wait "$shared_a" || fail "shared sweep a failed: $(tail -3 shared_a.log)"
wait "$shared_b" || fail "shared sweep b failed: $(tail -3 shared_b.log)"
unset FEDSILO_MPIRUN_ARGS
ran=$(cat shared_a.log shared_b.log | grep -c '^== task [0-9]*/4:' || true)
[ "$ran" = 4 ] || fail "two shared sweeps started $ran runs of 4 tasks: $(cat shared_a.log shared_b.log | grep '^== task')"
for f in tiny_fedavg_s1_rounds-2.h5 tiny_local_s1_rounds-2.h5 tiny_fedavg_s2_rounds-2.h5 tiny_local_s2_rounds-2.h5; do
  h5_complete "out/$f" || fail "shared sweeps: out/$f missing or incomplete"
done
! ls out/*.claim >/dev/null 2>&1 || fail "shared sweeps left claims: $(ls -d out/*.claim)"
log "FEDSILO_SHARED=1: two sweeps side by side ran each of 4 tasks once (a: $(grep -c '^== task [0-9]*/4:' shared_a.log), b: $(grep -c '^== task [0-9]*/4:' shared_b.log))"

# sweeps.sh N MANIFEST: N such sweeps in one command. Every task runs once; SIGTERM stops them all
# resumably (every run checkpoints, exit 75), and the same command again finishes the tasks.
printf 'tiny.ini fedavg 6 --rounds 2\ntiny.ini local 6 --rounds 2\ntiny.ini fedavg 7 --rounds 2\n' >many.txt
FEDSILO_RANKS=1 "$J/sweeps.sh" 2 many.txt >sweeps.log 2>&1 || fail "sweeps.sh failed: $(tail -3 sweeps.log)"
ran=$(cat out/sweeps/many.txt.1.log out/sweeps/many.txt.2.log | grep -c '^== task [0-9]*/3:' || true)
[ "$ran" = 3 ] || fail "sweeps.sh 2 started $ran runs of 3 tasks"
for f in tiny_fedavg_s6_rounds-2.h5 tiny_local_s6_rounds-2.h5 tiny_fedavg_s7_rounds-2.h5; do
  h5_complete "out/$f" || fail "sweeps.sh: out/$f missing or incomplete"
done
printf 'tiny.ini fedavg 8\ntiny.ini local 8\n' >slow.txt
FEDSILO_RANKS=1 FEDSILO_FAULT=slow:rank=0,ms=300 "$J/sweeps.sh" 2 slow.txt >sweeps_stop.log 2>&1 &
pid=$!
wait_for_line 'round +global_acc' out/sweeps/slow.txt.1.log 120 "$pid" &&
  wait_for_line 'round +global_acc' out/sweeps/slow.txt.2.log 120 "$pid" && kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 75 ] || fail "sweeps.sh after SIGTERM exited $rc, expected 75: $(tail -3 sweeps_stop.log)"
for f in tiny_fedavg_s8.h5 tiny_local_s8.h5; do
  [ -f "out/$f.ckpt" ] || fail "sweeps.sh: no checkpoint of out/$f after SIGTERM"
done
FEDSILO_RANKS=1 "$J/sweeps.sh" 2 slow.txt >sweeps_again.log 2>&1 || fail "sweeps.sh again failed: $(tail -3 sweeps_again.log)"
for f in tiny_fedavg_s8.h5 tiny_local_s8.h5; do
  h5_complete "out/$f" || fail "sweeps.sh again: out/$f missing or incomplete"
done
[ "$(cat out/sweeps/slow.txt.1.log out/sweeps/slow.txt.2.log | grep -c '^resuming from')" = 2 ] ||
  fail "sweeps.sh again did not resume both runs"
log "sweeps.sh 2: 3 tasks run once each; SIGTERM -> both runs checkpointed, exit 75; again -> both resumed"
for bad in "0 many.txt" "two many.txt" "2 no-such.manifest"; do
  rc=0
  # shellcheck disable=SC2086 # the two arguments
  "$J/sweeps.sh" $bad >bad_sweeps.log 2>&1 || rc=$?
  if [ "$rc" != 2 ] || ! grep -q "error:" bad_sweeps.log; then
    fail "sweeps.sh $bad: exit $rc, expected 2 with an error: $(cat bad_sweeps.log)"
  fi
done
log "sweeps.sh: a bad N or manifest exits 2 with an error"

# The shipped example manifest, jobs/sweep.manifest: every task line names an existing configuration
# (relative to the repository root), an algorithm of the registry and a seed, and no --output; the
# task count of its usage text (grep -cv ...) is the one the scripts use.
M=$FEDSILO_SOURCE_DIR/jobs/sweep.manifest
# shellcheck source=../../jobs/local/common.sh
source "$J/common.sh" # the scripts' own manifest helpers
N=$(fedsilo_manifest_count "$M")
[ "$N" -ge 1 ] && [ "$N" = "$(grep -cv -e '^\s*$' -e '^\s*#' "$M")" ] ||
  fail "jobs/sweep.manifest: $N task lines, and its usage text counts $(grep -cv -e '^\s*$' -e '^\s*#' "$M")"
ALGS=$(algorithms)
want=()
for ((i = 0; i < N; i++)); do
  read -ra L <<<"$(fedsilo_manifest_line "$M" "$i")"
  if [ "${#L[@]}" -lt 3 ] || [ ! -f "$FEDSILO_SOURCE_DIR/${L[0]}" ] || ! grep -qx -- "${L[1]}" <<<"$ALGS" ||
    ! [[ "${L[2]}" =~ ^[0-9]+$ ]] || fedsilo_has_output "${L[@]:3}"; then
    fail "jobs/sweep.manifest task $i: not 'CONFIG ALGORITHM SEED [options]' with an existing config, a registry algorithm, a seed and no --output: '${L[*]}'"
  fi
  want+=("$(basename "$(FEDSILO_OUT=out fedsilo_sweep_output "${L[@]}")")")
done
# Run as shipped, from a directory whose configs/ holds shrunken copies of the manifest's configurations
# (2 rounds, 100 samples per client, 32 hidden units), so every task runs in seconds.
mkdir -p ship/configs
for c in $(for ((i = 0; i < N; i++)); do fedsilo_manifest_line "$M" "$i" | awk '{print $1}'; done | sort -u); do
  mkdir -p "ship/$(dirname "$c")"
  sed -e 's/^rounds *=.*/rounds = 2/' -e 's/^hidden *=.*/hidden = 32/' -e '/^\[partition\]/a samples_per_client = 100' \
    "$FEDSILO_SOURCE_DIR/$c" >"ship/$c"
  grep -q '^rounds = 2' "ship/$c" && grep -q '^samples_per_client = 100' "ship/$c" ||
    fail "could not shrink $c for the sweep (no 'rounds =' or [partition])"
done
(cd ship && "$J/sweep.sh" "$M") >ship.log 2>&1 || fail "sweep.sh jobs/sweep.manifest failed: $(tail -3 ship.log)"
for f in "${want[@]}"; do
  h5_complete "out/$f" || fail "sweep.sh jobs/sweep.manifest: out/$f missing or incomplete (have: $(ls out | tr '\n' ' '))"
done
"$PY" - out "$M" "${want[@]}" <<'PYEOF' || fail "the shipped manifest's files hold the wrong runs (above)"
import sys, h5py
d, manifest, names = sys.argv[1], sys.argv[2], sys.argv[3:]
lines = [l.split() for l in open(manifest) if l.strip() and not l.lstrip().startswith("#")]
for name, (cfg, alg, seed, *_) in zip(names, lines):
    with h5py.File(f"{d}/{name}", "r") as f:
        a = f.attrs["algorithm"]; a = a.decode() if isinstance(a, bytes) else a
        assert a == alg and int(f.attrs["seed"]) == int(seed), f"{name}: algorithm {a}, seed {f.attrs['seed']}"
PYEOF
log "sweep.sh jobs/sweep.manifest (shrunken configs): $N tasks -> ${want[*]}"

# A claim held by a live process is skipped and left alone; one whose process is gone (this host, a pid
# above the kernel's pid_max) is taken over and released once the task is done.
live=$(FEDSILO_OUT=out fedsilo_sweep_output tiny.ini fedavg 4 --rounds 2)
stale=$(FEDSILO_OUT=out fedsilo_sweep_output tiny.ini local 4 --rounds 2)
mkdir "$live.claim" "$stale.claim"
echo "$(uname -n) $$" >"$live.claim/owner"
echo "$(uname -n) 2147483647" >"$stale.claim/owner"
printf 'tiny.ini fedavg 4 --rounds 2\ntiny.ini local 4 --rounds 2\n' >claims.txt
FEDSILO_SHARED=1 "$J/sweep.sh" claims.txt >claims.log 2>&1 || fail "sweep.sh with claims failed: $(tail -3 claims.log)"
grep -q "^== task 0: claimed by another sweep ($(uname -n) $$), skipped" claims.log ||
  fail "sweep.sh did not skip the task a live process holds: $(head -3 claims.log)"
if [ -e "$live" ] || [ ! -d "$live.claim" ]; then fail "sweep.sh ran, or unclaimed, the task a live process holds"; fi
h5_complete "$stale" || fail "sweep.sh did not take over the stale claim's task: $(tail -3 claims.log)"
[ ! -e "$stale.claim" ] || fail "sweep.sh left its claim of $stale"
rm -r "$live.claim"
log "FEDSILO_SHARED=1: a live claim skipped and kept, a stale one taken over and released"

# scaling.sh: strong runs keep the config's problem (4 clients of at most 100 samples at 1 and 2 ranks);
# weak runs hold the samples per client fixed (FEDSILO_WEAK_SAMPLES = 60) while the clients grow with
# the ranks (2 per rank), whatever the config's partition says.
FEDSILO_SCALING_RANKS="1 2" FEDSILO_STRONG_CLIENTS=4 FEDSILO_WEAK_CLIENTS=2 FEDSILO_WEAK_SAMPLES=60 \
  "$J/scaling.sh" tiny.ini --rounds 2 >scaling.log 2>&1 || fail "scaling.sh failed: $(tail -3 scaling.log)"
if [ "$(head -1 out/scaling.csv)" = "mode,ranks,clients,seconds_per_round" ] &&
  [ "$(cut -d, -f1-3 out/scaling.csv | tail -n +2 | tr '\n' ' ')" = "strong,1,4 strong,2,4 weak,1,2 weak,2,4 " ]; then
  "$FEDSILO_SOURCE_DIR/tools/fedsilo-analysis" plot scaling "$WORK/out/scaling.csv" --out "$WORK/plot" >/dev/null ||
    fail "tools/fedsilo-analysis plot scaling rejects out/scaling.csv"
  log "scaling.sh: $(tail -n +2 out/scaling.csv | tr '\n' ' ')"
else
  fail "scaling.sh: unexpected CSV: $(tr '\n' ' ' <out/scaling.csv)"
fi
for f in weak_p1_k2 weak_p2_k4; do
  sizes=$(fedsilo_client_samples "out/scaling/$f.h5") && [ "$(tr ' ' '\n' <<<"$sizes" | sort -u)" = 60 ] ||
    fail "scaling.sh: $f: client samples '$sizes', expected 60 each"
done
sizes=$(fedsilo_client_samples out/scaling/strong_p2_k4.h5)
[ "$(tr ' ' '\n' <<<"$sizes" | sort -u)" = 100 ] ||
  fail "scaling.sh: strong run: client samples '$sizes', expected the config's 100"
log "scaling.sh: weak runs at 60 samples per client at 1 and 2 ranks, strong runs at the config's 100"
# A weak run whose clients cannot all get FEDSILO_WEAK_SAMPLES (4 x 20,000 > 60,000) is left out, exit 1.
rc=0
FEDSILO_SCALING_RANKS=2 FEDSILO_SCALING_MODES=weak FEDSILO_WEAK_CLIENTS=2 FEDSILO_WEAK_SAMPLES=20000 \
  FEDSILO_SCALING_CSV=$WORK/small.csv "$J/scaling.sh" tiny.ini --rounds 1 --train.epochs 0 >small.log 2>&1 || rc=$?
if [ "$rc" = 1 ] && grep -q "not every client holds 20000 samples" small.log && [ "$(wc -l <small.csv)" = 1 ]; then
  log "scaling.sh: a weak run with too few samples per client is reported and left out (exit 1)"
else
  fail "scaling.sh with FEDSILO_WEAK_SAMPLES too large: exit $rc, csv '$(tr '\n' ' ' <small.csv)'," \
    "log: $(tail -2 small.log)"
fi
finish
