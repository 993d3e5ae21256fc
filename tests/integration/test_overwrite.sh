#!/usr/bin/env bash
# label: integration
# timeout: 300
# A finished results file is never replaced silently (docs/hpc.md, "A finished results file"):
#  * a second run into the same --output is refused at start-up (exit 2, one line naming the file and
#    --overwrite) and leaves the first run's file byte for byte as it was; --dry-run says the same;
#  * --resume of the finished run says it is finished, exits 0 and changes no byte (with --overwrite too);
#  * --overwrite replaces it (a run with another seed gives another file);
#  * jobs/local/sweep.sh run twice skips its finished tasks, files unchanged;
#  * a mistyped option gets the nearest known one (command line and INI file with its line).
TEST_NAME=test_overwrite
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
cd "$WORK"
BASE=("${TINY[@]}" --rounds 2 --seed 3)
run() {  # run LOG NP ARGS...: sets RC
  local logf=$1 np=$2
  shift 2
  RC=0
  timeout 120 "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "$@" >"$logf" 2>&1 || RC=$?
}

run first.log 2 "${BASE[@]}" --output r.h5
[ "$RC" = 0 ] && [ -f r.h5 ] || die "the first run exited $RC: $(tail -3 first.log)"
sum=$(sha256sum <r.h5)

# A second run, the same output: refused before any data is read, the file untouched.
run second.log 2 "${BASE[@]}" --seed 4 --output r.h5
msg=$(grep 'fedsilo: error' second.log || true)
if [ "$RC" = 2 ] && [ "$(grep -c 'fedsilo: error' second.log)" = 1 ] && grep -q "output = r.h5: .*--overwrite" <<<"$msg"; then
  log "second run refused: $msg"
else
  fail "second run: exit $RC, expected 2 with one line naming r.h5 and --overwrite: $(tail -3 second.log)"
fi
[ "$(sha256sum <r.h5)" = "$sum" ] || fail "the refused run changed r.h5"
[ ! -e r.h5.partial ] && [ ! -e r.h5.ckpt ] && [ ! -e r.h5.lock ] || fail "the refused run left files: $(ls)"
run dry.log 1 "${BASE[@]}" --seed 4 --output r.h5 --dry-run
[ "$RC" = 2 ] && grep -q "fedsilo: error: output = r.h5: .*--overwrite" dry.log ||
  fail "--dry-run of the second run: exit $RC, expected the run's refusal: $(tail -2 dry.log)"

# --resume of the finished run: finished, nothing changed; with --overwrite as well.
for extra in "" --overwrite; do
  # shellcheck disable=SC2086 # extra is one word or none
  run "resume$extra.log" 2 "${BASE[@]}" --output r.h5 --resume $extra
  if [ "$RC" = 0 ] && grep -q "^--resume: r.h5 is a finished run's results file" "resume$extra.log" &&
    ! grep -q '^ *round' "resume$extra.log"; then
    log "--resume $extra of a finished run: $(grep -m1 '^--resume' "resume$extra.log")"
  else
    fail "--resume $extra of a finished run: exit $RC, expected 0 with the note and no round: $(tail -3 "resume$extra.log")"
  fi
  [ "$(sha256sum <r.h5)" = "$sum" ] || fail "--resume $extra of a finished run changed r.h5"
  [ ! -e r.h5.ckpt ] && [ ! -e r.h5.partial ] || fail "--resume $extra of a finished run left files: $(ls)"
done
run dry_resume.log 1 "${BASE[@]}" --output r.h5 --resume --dry-run
[ "$RC" = 0 ] && grep -q "^--resume: r.h5 is a finished run's results file" dry_resume.log ||
  fail "--dry-run --resume of a finished run: exit $RC: $(tail -2 dry_resume.log)"

# --overwrite: replaced, and says so.
run over.log 2 "${BASE[@]}" --seed 4 --output r.h5 --overwrite
if [ "$RC" = 0 ] && grep -q "^note: r.h5 holds a finished run's results; this run replaces them" over.log &&
  [ "$(sha256sum <r.h5)" != "$sum" ] && h5_complete r.h5; then
  log "--overwrite: replaced, with a note"
else
  fail "--overwrite: exit $RC, or r.h5 not replaced: $(tail -3 over.log)"
fi

# The sweep script, run twice into the same outputs: the second time skips the finished tasks.
cat >tiny.ini <<'INI'
dataset = fashion_mnist
clients = 4
rounds = 1
[model]
hidden = 16
[partition]
samples_per_client = 100
INI
printf 'tiny.ini fedavg 0\ntiny.ini local 1\n' >m.txt
export FEDSILO_EXE FEDSILO_OUT=$WORK/out FEDSILO_RANKS=1
J=$FEDSILO_SOURCE_DIR/jobs/local
rc=0
"$J/sweep.sh" m.txt >sweep1.log 2>&1 || rc=$?
[ "$rc" = 0 ] && [ -f out/tiny_fedavg_s0.h5 ] && [ -f out/tiny_local_s1.h5 ] || fail "sweep.sh: exit $rc: $(tail -3 sweep1.log)"
sums=$(cat out/*.h5 | sha256sum)
rc=0
"$J/sweep.sh" m.txt >sweep2.log 2>&1 || rc=$?
if [ "$rc" = 0 ] && [ "$(grep -c 'exists, skipped' sweep2.log)" = 2 ] && [ "$(cat out/*.h5 | sha256sum)" = "$sums" ]; then
  log "sweep.sh twice: finished tasks skipped, files unchanged"
else
  fail "sweep.sh twice: exit $rc, or the finished tasks were not skipped: $(tail -3 sweep2.log)"
fi

# A mistyped option: the nearest known one, on the command line and with the INI file's line.
RC=0
"$FEDSILO_EXE" "${BASE[@]}" --train.lrr 0.1 --output typo.h5 >typo.log 2>&1 || RC=$?
[ "$RC" = 2 ] && grep -qx "fedsilo: error: command line: unrecognised option 'train.lrr'; did you mean 'train.lr'?" typo.log ||
  fail "--train.lrr: exit $RC: $(cat typo.log)"
printf 'rounds = 2\n[train]\nbatch = 8\nlrr = 0.1\n' >typo.ini
RC=0
"$FEDSILO_EXE" --config typo.ini --output typo.h5 >typo_ini.log 2>&1 || RC=$?
[ "$RC" = 2 ] && grep -qx "fedsilo: error: typo.ini:4: unrecognised option 'train.lrr'; did you mean 'train.lr'?" typo_ini.log ||
  fail "typo.ini: exit $RC: $(cat typo_ini.log)"
[ ! -e typo.h5 ] || fail "a mistyped option left typo.h5"
finish
