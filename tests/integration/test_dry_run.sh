#!/usr/bin/env bash
# label: integration
# timeout: 600
# cost: 138
# --dry-run is the real run's start-up without training (docs/cli.md): for each kind of start-up
# failure the dry run exits with the code the real run exits with, printing the same error line, and
# creates nothing (no folder, no lock file, no .partial); a configuration that can run passes with
# exit 0 and "# dry run: start-up checks passed". Cases: a bad option value (2), a data file that is
# missing (3) or bad (3), a missing partition file (3), a missing alpha_fedavg.reference (2), an
# output name too long (2), an output folder that cannot be written (1), an output held by another
# run's lock (2, naming its pid), --resume with a checkpoint of another configuration (2) or a damaged
# one (1); --resume with a good checkpoint or none passes (0) and creates nothing. At 1 and 2 ranks.
TEST_NAME=test_dry_run
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
cd "$WORK"
mkdir logs

BASE=("${TINY[@]}" --rounds 2)
# The two streams go to two files: mpirun forwards them separately, so in one file a chunk of the dry
# run's configuration (stdout) can land in the middle of the error line (stderr).
attempt() {  # attempt NP LOG ARGS...: stdout to LOG, stderr to LOG's .err; sets RC
  local np=$1 logf=$2
  shift 2
  RC=0
  "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "$@" >"$logf" 2>"${logf%.log}.err" || RC=$?
}
first_error() { grep -m1 '^fedsilo: error' "${1%.log}.err" || true; }  # LOG as given to attempt

# same_as_real NAME NP WANT_RC PATTERN OUTPUT ARGS...: the dry run and the real run exit WANT_RC with the
# same error line, matching PATTERN; the dry run leaves the folder of OUTPUT as it was.
same_as_real() {
  local name=$1 np=$2 want=$3 pattern=$4 out=$5
  shift 5
  local dir before logs=$WORK/logs/n$np-$name
  dir=$(dirname "$out")
  before=$(ls -A "$dir" 2>/dev/null | sort | tr '\n' ' ' || true)
  attempt "$np" "$logs.dry.log" "$@" --output "$out" --dry-run
  local dry_rc=$RC dry_err
  dry_err=$(first_error "$logs.dry.log")
  # (/proc, the unwritable folder, changes by itself)
  [ "$dir" = /proc ] || [ "$(ls -A "$dir" 2>/dev/null | sort | tr '\n' ' ' || true)" = "$before" ] ||
    fail "$name (-n $np): the dry run changed $dir: $(ls -A "$dir" | tr '\n' ' ')"
  attempt "$np" "$logs.real.log" "$@" --output "$out"
  local real_err
  real_err=$(first_error "$logs.real.log")
  log "$name (-n $np): dry run exit $dry_rc, real run exit $RC: $dry_err"
  [ "$dry_rc" = "$want" ] || fail "$name (-n $np): dry run exit $dry_rc, expected $want"
  [ "$RC" = "$want" ] || fail "$name (-n $np): real run exit $RC, expected $want"
  [ "$dry_err" = "$real_err" ] || fail "$name (-n $np): the dry run says '$dry_err', the real run '$real_err'"
  grep -qE -- "$pattern" <<<"$dry_err" || fail "$name (-n $np): the error does not match /$pattern/"
}

# Inputs: a CSV with a missing and a bad variant, a partition file, a damaged checkpoint.
"$PY" - <<'EOF'
import random
random.seed(0)
with open("good.csv", "w") as f:
    f.write("a,b,label\n")
    for i in range(200):
        f.write(f"{random.random()},{random.random()},{i % 2}\n")
with open("bad.csv", "w") as f:
    f.write("a,b,label\n1.0,nan,0\n")
EOF
CSV=(--dataset csv --clients 4 --model.hidden 8 --rounds 2 --partition.scheme iid)

for np in 1 2; do
  mkdir -p "n$np" && cd "n$np"
  # A configuration that can run: exit 0, nothing created (out/ does not exist and stays so).
  attempt "$np" "$WORK/logs/n$np-ok.log" "${BASE[@]}" --output out/ok.h5 --dry-run
  ok=$WORK/logs/n$np-ok.log
  [ "$RC" = 0 ] || fail "valid configuration (-n $np): dry run exit $RC: $(first_error "$ok")"
  grep -q '^# dry run: start-up checks passed' "$ok" || fail "valid configuration (-n $np): no 'checks passed' line"
  grep -q '^\[train\]' "$ok" || fail "valid configuration (-n $np): the resolved configuration is not printed"
  [ ! -e out ] || fail "valid configuration (-n $np): the dry run created out/"
  cp ../good.csv ../bad.csv .

  same_as_real bad-option "$np" 2 "train.lr" r.h5 "${BASE[@]}" --train.lr -1
  same_as_real missing-data "$np" 3 "missing.csv" r.h5 "${CSV[@]}" --data.file missing.csv
  same_as_real bad-data "$np" 3 "'nan' is not a finite number" r.h5 "${CSV[@]}" --data.file bad.csv
  same_as_real missing-partition "$np" 3 "missing.npy" r.h5 "${BASE[@]}" --partition.scheme file --partition.file missing.npy
  same_as_real missing-reference "$np" 2 "alpha_fedavg.reference = missing.h5" r.h5 "${BASE[@]}" --algorithm alpha_fedavg \
    --alpha_fedavg.reference missing.h5
  same_as_real name-too-long "$np" 2 "characters long, above the limit of" "$(printf 'x%.0s' $(seq 240)).h5" "${BASE[@]}"
  same_as_real unwritable "$np" 1 "cannot create a file in /proc" "/proc/fedsilo-dry-$$.h5" "${BASE[@]}"

  # Another run holds the output's lock (flock(1) takes the same flock(2) lock fedsilo takes).
  echo "pid 4242 on host elsewhere, since 2026-01-01T00:00:00Z" >held.h5.lock
  # Its sleep gets none of the test's streams and is ended with it: ctest waits for every process that
  # holds the test's output pipe, so a sleep left running would add its whole 120 s to the test.
  flock -n held.h5.lock sleep 120 </dev/null >/dev/null 2>&1 &
  holder=$!
  sleep 0.3
  same_as_real lock-held "$np" 2 "another fedsilo run is writing it \(pid 4242 on host elsewhere" held.h5 "${BASE[@]}"
  pkill -P "$holder" sleep 2>/dev/null || true  # flock(1) exits when its command does
  wait "$holder" 2>/dev/null || true
  rm -f held.h5.lock

  # --resume: a checkpoint of another configuration, then a damaged one.
  FEDSILO_FAULT=slow:rank=0,ms=300 "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "${BASE[@]}" --rounds 4 --checkpoint.every 1 \
    --output ck.h5 >"$WORK/logs/n$np-ck.log" 2>&1 &
  pid=$!
  wait_for_line 'checkpoint before round 1' "$WORK/logs/n$np-ck.log" 120 "$pid" || die "no checkpoint"
  signal_ranks KILL "$pid" || true
  wait "$pid" 2>/dev/null || true
  rm -f ck.h5.partial ck.h5.lock
  cp ck.h5.ckpt "$WORK/logs/n$np-ck.saved"
  attempt "$np" "$WORK/logs/n$np-resume-ok.log" "${BASE[@]}" --rounds 4 --checkpoint.every 1 --output ck.h5 --resume --dry-run
  [ "$RC" = 0 ] && grep -q "checkpoint ck.h5.ckpt verified" "$WORK/logs/n$np-resume-ok.log" ||
    fail "resume (-n $np): the dry run of a good checkpoint: exit $RC: $(first_error "$WORK/logs/n$np-resume-ok.log")"
  cmp -s ck.h5.ckpt "$WORK/logs/n$np-ck.saved" || fail "resume (-n $np): the dry run changed the checkpoint"
  for f in ck.h5 ck.h5.partial ck.h5.lock ck.h5.ckpt.tmp ck.h5.jsonl; do
    [ ! -e "$f" ] || fail "resume (-n $np): the dry run created $f"
  done
  # --resume without a checkpoint: the real run starts from round 0, so the dry run passes and says so.
  attempt "$np" "$WORK/logs/n$np-resume-none.log" "${BASE[@]}" --output fresh.h5 --resume --dry-run
  [ "$RC" = 0 ] || fail "resume without a checkpoint (-n $np): dry run exit $RC"
  grep -q -- "--resume: no checkpoint fresh.h5.ckpt, starting from round 0" "$WORK/logs/n$np-resume-none.log" ||
    fail "resume without a checkpoint (-n $np): no 'no checkpoint' line"
  ! compgen -G 'fresh.h5*' >/dev/null || fail "resume without a checkpoint (-n $np): the dry run created $(echo fresh.h5*)"
  same_as_real resume-other-config "$np" 2 "was written with seed = 0, this run has seed = 9" ck.h5 "${BASE[@]}" \
    --rounds 4 --checkpoint.every 1 --seed 9 --resume
  "$PY" - ck.h5.ckpt <<'EOF'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    off = f["replicated/driver/global"].id.get_offset()
with open(sys.argv[1], "r+b") as f:
    f.seek(off + 40); b = f.read(1); f.seek(off + 40); f.write(bytes([b[0] ^ 0xFF]))
EOF
  same_as_real resume-damaged "$np" 1 "array '/replicated/driver/global' does not match its checksum" ck.h5 "${BASE[@]}" \
    --rounds 4 --checkpoint.every 1 --resume
  cd "$WORK"
done
finish
