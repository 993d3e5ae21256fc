#!/usr/bin/env bash
# label: integration
# timeout: 600
# The workstation job scripts (jobs/local/): run.sh stopped with SIGTERM (forwarded to mpirun as
# SIGUSR1) exits 75 with a checkpoint and, run again, resumes to the same result as an uninterrupted
# run; sweep.sh runs a 2-line manifest into one named file per line and skips finished tasks when run
# again; scaling.sh writes mode,ranks,clients,seconds_per_round that `analysis plot scaling` reads.
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

# scaling.sh
FEDSILO_SCALING_RANKS="1 2" FEDSILO_STRONG_CLIENTS=4 FEDSILO_WEAK_CLIENTS=2 "$J/scaling.sh" tiny.ini --rounds 2 >scaling.log 2>&1 ||
  fail "scaling.sh failed: $(tail -3 scaling.log)"
if [ "$(head -1 out/scaling.csv)" = "mode,ranks,clients,seconds_per_round" ] &&
  [ "$(cut -d, -f1-3 out/scaling.csv | tail -n +2 | tr '\n' ' ')" = "strong,1,4 strong,2,4 weak,1,2 weak,2,4 " ]; then
  (cd "$FEDSILO_SOURCE_DIR" && "$PY" -m analysis plot scaling "$WORK/out/scaling.csv" --out "$WORK/plot" >/dev/null) ||
    fail "analysis plot scaling rejects out/scaling.csv"
  log "scaling.sh: $(tail -n +2 out/scaling.csv | tr '\n' ' ')"
else
  fail "scaling.sh: unexpected CSV: $(tr '\n' ' ' <out/scaling.csv)"
fi
finish
