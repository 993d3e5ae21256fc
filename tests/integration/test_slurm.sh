#!/usr/bin/env bash
# label: slurm
# timeout: 900
# cost: 75
# A private single-node SLURM cluster, started and stopped by this test (docs/hpc.md, "The SLURM test"):
# slurm.conf generated from `hostname -s` and `slurmd -C` into a temporary directory (SLURM_CONF
# points every daemon and command at it; nothing under /etc/slurm is used), its own munged with its
# own key and socket, slurmctld and slurmd on free ports. Then:
#   1. jobs/run.sbatch on a tiny configuration -> a complete results file; submitted with --partition on
#      the command line, FEDSILO_ENV_HOOK (sourced: its line is in the log) and no --output (the log is
#      logs/fedsilo-<id>.out); with FEDSILO_SRUN_MPI= (the site's MpiDefault) it completes too, and with
#      FEDSILO_SRUN_MPI=none (srun then starts one-rank runs Open MPI refuses) it fails, leaving no file;
#   2. jobs/sweep.sbatch as a 2-task array -> one complete, correctly named file per task; and
#      jobs/scaling.sbatch at 1 and 2 ranks -> out/scaling.csv that `analysis plot scaling` reads;
#   3. jobs/run.sbatch stopped with SIGUSR1 to the batch shell (what --signal=B:USR1@120 sends before
#      the walltime): fedsilo checkpoints and exits 75, the script requeues the job, the requeued job
#      resumes, and the result equals an uninterrupted mpirun run.
# Every daemon this test started is stopped by PID in an EXIT trap, also on failure; its jobs are
# cancelled first. Needs root and the packages munge slurmctld slurmd slurm-client: tests/run.sh
# installs them (FEDSILO_WITH_SLURM=1 jobs/setup.sh), and this test installs whatever is missing
# itself with apt-get (jobs/packages.sh). Without root, or without apt-get, a missing piece FAILS it.
TEST_NAME=test_slurm
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
T0=$(now_ms)

[ "$(id -u)" = 0 ] || die "needs root (slurmd and slurmctld run as root in this test cluster)"
# On a fresh machine the SLURM parts are installed here, with apt-get (the list and the installer
# are jobs/setup.sh's, from jobs/packages.sh). Without root and apt-get the test fails, naming them.
SLURM_BINS=(slurmctld slurmd sbatch squeue sinfo scontrol scancel munged munge unmunge)
case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin ;; esac # Debian's daemons live there
missing_bins() {
  local b gone=()
  for b in "${SLURM_BINS[@]}"; do command -v "$b" >/dev/null || gone+=("$b"); done
  echo "${gone[@]:-}"
}
if [ -n "$(missing_bins)" ]; then
  # shellcheck source=../../jobs/packages.sh
  source "$FEDSILO_SOURCE_DIR/jobs/packages.sh"
  log "not found: $(missing_bins); installing the SLURM test's packages"
  fedsilo_install_missing test_slurm --no-install-recommends "${FEDSILO_SLURM_PKGS[@]}" ||
    die "the SLURM packages (${FEDSILO_SLURM_PKGS[*]}) are missing and could not be installed (above)"
  hash -r
  [ -z "$(missing_bins)" ] ||
    die "'$(missing_bins)' still not found after installing ${FEDSILO_SLURM_PKGS[*]} (PATH=$PATH)"
fi

S=$(mktemp -d "${TMPDIR:-/tmp}/fedsilo-slurm.XXXXXX")
chmod 755 "$S"  # munged wants its socket directory reachable by everyone
WORK=$S/work
mkdir -p "$WORK" "$S/state" "$S/spool" "$S/log" "$S/sock"
mkdir -m 700 "$S/munge"
MUNGED_PID="" SLURMCTLD_PID="" SLURMD_PID="" JOBS=() PASSED=0

stop_daemons() {  # stop_daemons NAME=PID...: TERM to all at once, up to 10 s, then KILL those left
  local d pid left
  for d in "$@"; do
    pid=${d#*=}
    if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; fi
  done
  for _ in $(seq 100); do
    left=()
    for d in "$@"; do
      pid=${d#*=}
      if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then left+=("$d"); fi
    done
    [ "${#left[@]}" = 0 ] && return 0
    sleep 0.1
  done
  for d in "${left[@]}"; do
    echo "test_slurm: ${d%%=*} (pid ${d#*=}) ignored SIGTERM; killing it" >&2
    kill -KILL "${d#*=}" 2>/dev/null || true
  done
}

cleanup() {
  set +e
  if [ -n "$SLURMCTLD_PID" ] && [ "${#JOBS[@]}" -gt 0 ]; then
    scancel "${JOBS[@]}" 2>/dev/null
    for _ in $(seq 100); do
      [ -z "$(squeue -h -j "$(IFS=,; echo "${JOBS[*]}")" 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  if [ "$PASSED" != 1 ]; then
    for f in "$S"/log/*.log "$WORK"/*.out "$WORK"/logs/*.out; do
      [ -f "$f" ] && { echo "---- $f (last lines)" >&2; tail -15 "$f" >&2; }
    done
  fi
  # slurmd and slurmctld together (1-2 s each to stop), munged after them: they authenticate through it.
  stop_daemons slurmd="$SLURMD_PID" slurmctld="$SLURMCTLD_PID"
  stop_daemons munged="$MUNGED_PID"
  rm -rf "$S"
}
trap cleanup EXIT

# ---- munge: a private daemon, key and socket (any system munged is left alone) ---------------------
dd if=/dev/urandom of="$S/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$S/munge/munge.key"
SOCK=$S/sock/munge.socket
munged --socket="$SOCK" --key-file="$S/munge/munge.key" --log-file="$S/log/munged.log" \
  --pid-file="$S/munge/munged.pid" --seed-file="$S/munge/munged.seed" ||
  die "munged could not start: $(tail -3 "$S/log/munged.log" 2>/dev/null)"
MUNGED_PID=$(cat "$S/munge/munged.pid")
munge -S "$SOCK" -n | unmunge -S "$SOCK" >/dev/null ||
  die "munge does not work (munge -n | unmunge failed): $(tail -3 "$S/log/munged.log")"

# ---- slurm.conf ---------------------------------------------------------------------------------------
HOST=$(hostname -s)
NODE=$(slurmd -C 2>/dev/null | head -1)
[[ "$NODE" == NodeName=* ]] || die "slurmd -C printed no NodeName line: '$NODE'"
NODE=$(echo "$NODE" | sed "s/^NodeName=[^ ]*/NodeName=$HOST NodeAddr=127.0.0.1/")
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT=$((20000 + ($$ * 7) % 20000))
until port_free "$PORT" && port_free $((PORT + 1)); do PORT=$((PORT + 2)); done
export SLURM_CONF=$S/slurm.conf
# cred_expire=10: SLURM holds a requeued job this long (part 3 below). SLURM refuses values below 5
# (AuthInfo=cred_expire=N invalid, and 120 instead); 10 leaves a margin because the same setting is the
# lifetime of every job and step credential, which must outlast a launch on a loaded machine.
# sched_interval=1: the main scheduling loop tests the pending jobs every second instead of every 60 s.
# The backfill loop is no substitute: with bf_interval=1 instead, the requeued job started 12-14 s
# after the requeue in two runs and 70 s after it in a third (the main loop's 60 s).
cat >"$SLURM_CONF" <<EOF
ClusterName=fedsilotest$$
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK,cred_expire=10
MpiDefault=pmix
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=600
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
$NODE State=UNKNOWN
PartitionName=fedsilo Nodes=$HOST Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF

slurmctld || die "slurmctld could not start: $(tail -5 "$S/log/slurmctld.log" 2>/dev/null)"
for _ in $(seq 50); do [ -s "$S/slurmctld.pid" ] && break; sleep 0.1; done
SLURMCTLD_PID=$(cat "$S/slurmctld.pid" 2>/dev/null || true)
[ -n "$SLURMCTLD_PID" ] || die "slurmctld wrote no pid file: $(tail -5 "$S/log/slurmctld.log" 2>/dev/null)"
slurmd -N "$HOST" || die "slurmd could not start: $(tail -5 "$S/log/slurmd.log" 2>/dev/null)"
for _ in $(seq 50); do [ -s "$S/slurmd.pid" ] && break; sleep 0.1; done
SLURMD_PID=$(cat "$S/slurmd.pid" 2>/dev/null || true)
[ -n "$SLURMD_PID" ] || die "slurmd wrote no pid file: $(tail -5 "$S/log/slurmd.log" 2>/dev/null)"
t=$(now_ms)
until sinfo -h -o %T 2>/dev/null | grep -q idle; do
  (($(now_ms) - t < 30000)) || die "the node did not become idle in 30 s: $(sinfo 2>&1 | tail -2)"
  sleep 0.1
done
log "cluster up in $(($(now_ms) - T0)) ms (ports $PORT/$((PORT + 1)), $NODE)"

# ---- jobs ---------------------------------------------------------------------------------------------
cat >"$WORK/tiny.ini" <<'EOF'
# test_slurm: 4 clients of 100 FashionMNIST samples, MLP 784-32-10, 2 rounds
dataset = fashion_mnist
model = mlp
clients = 4
rounds = 2
output = out/run.h5
[model]
hidden = 32
[partition]
samples_per_client = 100
EOF
printf '# config algorithm seed [options]\ntiny.ini fedavg 0\n\ntiny.ini local 1 --train.lr 0.1\n' >"$WORK/sweep.manifest"
export FEDSILO_ROOT=$FEDSILO_SOURCE_DIR FEDSILO_EXE FEDSILO_OUT=$WORK/out

submit() {  # submit OUTFILE ARGS...: prints the job id (OUTFILE -: the script's own log, logs/...)
  local out=$1 id
  shift
  [ "$out" = - ] && out=() || out=(--output="$out")
  id=$(sbatch --parsable --chdir="$WORK" "${out[@]}" "$@") || die "sbatch $* failed"
  id=${id%%;*}
  JOBS+=("$id")
  echo "$id"
}
wait_jobs() {  # wait_jobs TIMEOUT_S ID...: until none is pending or running
  local timeout=$1 t
  shift
  t=$(now_ms)
  while [ -n "$(squeue -h -j "$(IFS=,; echo "$*")" 2>/dev/null)" ]; do
    (($(now_ms) - t < timeout * 1000)) || die "jobs $* still queued or running after $timeout s: $(squeue 2>&1)"
    sleep 0.5
  done
}
job_field() {  # job_field ID FIELD: e.g. JobState, ExitCode (first array task if several)
  scontrol show job -o "$1" 2>/dev/null | head -1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}
check_done() {  # check_done ID WHAT
  local st ec
  st=$(job_field "$1" JobState)
  ec=$(job_field "$1" ExitCode)
  [ "$st" = COMPLETED ] && [ "$ec" = 0:0 ] || fail "$2: job $1 ended $st with exit code $ec"
}

# run.sbatch as documented: account/partition on the sbatch command line, its own log in logs/ (the
# working directory's, as the repository's), a site hook sourced first.
mkdir -p "$WORK/logs"
printf 'echo "site hook: loading modules"\nexport FEDSILO_TEST_HOOK=1\n' >"$WORK/hook.sh"
RUN=$(FEDSILO_ENV_HOOK=$WORK/hook.sh submit - --partition=fedsilo "$FEDSILO_SOURCE_DIR/jobs/run.sbatch" tiny.ini)
# srun's MPI plugin from FEDSILO_SRUN_MPI: empty = the site's MpiDefault (pmix here), and one Open MPI
# cannot start with (none), which must fail.
SITE=$(FEDSILO_SRUN_MPI= submit "$WORK/site-%j.out" "$FEDSILO_SOURCE_DIR/jobs/run.sbatch" tiny.ini --output out/site.h5)
NONE=$(FEDSILO_SRUN_MPI=none submit "$WORK/none-%j.out" "$FEDSILO_SOURCE_DIR/jobs/run.sbatch" tiny.ini \
  --output out/none.h5)
SWEEP=$(submit "$WORK/sweep-%A_%a.out" --array=0-1 "$FEDSILO_SOURCE_DIR/jobs/sweep.sbatch" sweep.manifest)
# Weak runs: 100 samples per client (sbatch passes the environment on), so both kinds stay tiny.
SCALE=$(FEDSILO_WEAK_SAMPLES=100 submit "$WORK/scaling-%j.out" --ntasks=2 "$FEDSILO_SOURCE_DIR/jobs/scaling.sbatch" \
  tiny.ini --rounds 2)
log "submitted run.sbatch (job $RUN; and $SITE, $NONE with other srun plugins), a 2-task sweep.sbatch" \
  "(job $SWEEP) and scaling.sbatch at 1-2 ranks (job $SCALE)"
wait_jobs 400 "$RUN" "$SITE" "$NONE" "$SWEEP" "$SCALE"
check_done "$RUN" "run.sbatch"
RUN_LOG=$WORK/logs/fedsilo-$RUN.out
if [ -f "$RUN_LOG" ] && grep -q '^site hook: loading modules' "$RUN_LOG" && grep -q 'srun --mpi=pmix:' "$RUN_LOG"; then
  log "run.sbatch: log in logs/fedsilo-$RUN.out, FEDSILO_ENV_HOOK sourced, srun --mpi=pmix"
else
  fail "run.sbatch: no log logs/fedsilo-$RUN.out with the hook's line and srun --mpi=pmix: $(ls "$WORK/logs" 2>&1)"
fi
check_done "$SITE" "run.sbatch with FEDSILO_SRUN_MPI= (the site's MpiDefault)"
grep -q 'srun (site MPI default):' "$WORK/site-$SITE.out" ||
  fail "FEDSILO_SRUN_MPI=: the job did not leave the plugin to the site"
if [ "$(job_field "$NONE" JobState)" != COMPLETED ] && grep -q 'srun --mpi=none:' "$WORK/none-$NONE.out" &&
  [ ! -e "$WORK/out/none.h5" ] && [ ! -e "$WORK/out/none.h5.partial" ]; then
  log "FEDSILO_SRUN_MPI=none reached srun: job $NONE $(job_field "$NONE" JobState)" \
    "($(job_field "$NONE" ExitCode)), no files"
else
  fail "FEDSILO_SRUN_MPI=none: job $NONE ended $(job_field "$NONE" JobState) or left files"
fi
for task in 0 1; do check_done "${SWEEP}_$task" "sweep.sbatch task $task"; done
check_done "$SCALE" "scaling.sbatch"
if [ "$(head -1 "$WORK/out/scaling.csv" 2>/dev/null)" = "mode,ranks,clients,seconds_per_round" ] &&
  [ "$(cut -d, -f1-3 "$WORK/out/scaling.csv" | tail -n +2 | tr '\n' ' ')" = "strong,1,16 strong,2,16 weak,1,4 weak,2,8 " ]; then
  "$FEDSILO_SOURCE_DIR/tools/fedsilo-analysis" plot scaling "$WORK/out/scaling.csv" --out "$WORK/scaling-plot.png" \
    >/dev/null ||
    fail "tools/fedsilo-analysis plot scaling rejects the scaling CSV"
  log "scaling.csv: $(tail -n +2 "$WORK/out/scaling.csv" | tr '\n' ' ')"
else
  fail "scaling.csv: unexpected content: $(cat "$WORK/out/scaling.csv" 2>/dev/null | tr '\n' ' ')"
fi
for f in out/run.h5 out/tiny_fedavg_s0.h5 out/tiny_local_s1_train.lr-0.1.h5; do
  if [ -f "$WORK/$f" ] && h5_complete "$WORK/$f"; then
    log "$f complete"
  else
    fail "$f missing or incomplete (files: $(ls "$WORK/out" 2>/dev/null | tr '\n' ' '))"
  fi
  [ ! -e "$WORK/$f.partial" ] && [ ! -e "$WORK/$f.ckpt" ] || fail "$f: partial or checkpoint left"
done
"$PY" - "$WORK/out" <<'PYEOF' || fail "sweep files hold the wrong runs (above)"
import sys, h5py
d = sys.argv[1]
for name, alg, seed in (("tiny_fedavg_s0.h5", "fedavg", 0), ("tiny_local_s1_train.lr-0.1.h5", "local", 1)):
    with h5py.File(f"{d}/{name}", "r") as f:
        a = f.attrs["algorithm"]; a = a.decode() if isinstance(a, bytes) else a
        assert a == alg and int(f.attrs["seed"]) == seed, f"{name}: algorithm {a}, seed {f.attrs['seed']}"
        assert int(f.attrs["num_ranks"]) == 2, f"{name}: {f.attrs['num_ranks']} ranks, expected 2"
PYEOF

# ---- walltime signal: SIGUSR1 to the batch shell -> checkpoint, exit 75, requeue, resume --------------
# SLURM holds a requeued job for cred_expire seconds and a little more (120 by default, 10 above:
# 11-12 s measured), and then the main scheduling loop starts it (sched_interval=1 above; with its
# default, 60 s, the wait grew by up to as much again).
sed -e 's/^rounds = 2/rounds = 30/' -e 's#^output = .*#output = out/long.h5#' "$WORK/tiny.ini" >"$WORK/long.ini"
# A test-only 200 ms pause per round (sbatch exports the environment) keeps the job running until
# the signal lands, however fast the rounds are.
LONG=$(FEDSILO_FAULT=slow:rank=0,ms=200 submit "$WORK/long-%j.out" "$FEDSILO_SOURCE_DIR/jobs/run.sbatch" long.ini)
t=$(now_ms)
until grep -qE '^ +1 ' "$WORK/long-$LONG.out" 2>/dev/null; do
  (($(now_ms) - t < 300000)) || die "job $LONG printed no round in 300 s"
  [ -n "$(squeue -h -j "$LONG" 2>/dev/null)" ] || die "job $LONG ended before its first rounds"
  sleep 0.1
done
scancel --batch --signal=USR1 "$LONG" || fail "scancel --batch --signal=USR1 $LONG failed"
# The uninterrupted reference meanwhile, with mpirun outside SLURM.
(cd "$WORK" && "$MPIEXEC" -n 2 "$FEDSILO_EXE" --config long.ini --output out/ref.h5 >ref.log 2>&1) ||
  fail "reference run failed: $(tail -3 "$WORK/ref.log")"
wait_jobs 400 "$LONG"
OUT=$WORK/long-$LONG.out
check_done "$LONG" "signalled and requeued run.sbatch"
[ "$(job_field "$LONG" Restarts)" = 1 ] || fail "job $LONG: Restarts=$(job_field "$LONG" Restarts), expected 1 (requeued once)"
grep -q 'exit code 75' "$OUT" || fail "job $LONG: the stopped run did not exit 75"
grep -q 'requeueing' "$OUT" || fail "job $LONG: run.sbatch did not requeue after the checkpoint"
grep -q '^resuming from' "$OUT" || fail "job $LONG: the requeued run did not resume (no --resume?)"
if h5_complete "$WORK/out/long.h5" && h5_same "$WORK/out/ref.h5" "$WORK/out/long.h5"; then
  log "job $LONG: SIGUSR1 -> $(grep -o 'stopped before round [0-9]* of [0-9]*' "$OUT"), exit 75, requeued, resumed; result identical to the uninterrupted run"
else
  fail "resumed result incomplete or different from the uninterrupted run"
fi
[ ! -e "$WORK/out/long.h5.ckpt" ] && [ ! -e "$WORK/out/long.h5.partial" ] || fail "long.h5: checkpoint or partial left"

log "took $(($(now_ms) - T0)) ms"
((FAILURES == 0)) && PASSED=1
finish
