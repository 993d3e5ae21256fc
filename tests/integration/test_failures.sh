#!/usr/bin/env bash
# label: integration
# timeout: 900
# cost: 30
# A failure on ONE rank must take every rank down promptly: under mpirun -n 2 and -n 4, each case
# must exit with its documented code, print exactly one "fedsilo: error:" line (from the rank that saw
# it), exit within 10 s of that line, and leave no results file (neither <output> nor
# <output>.partial) and no half-written checkpoint.
# Cases: bad data on rank 1 only (FEDSILO_FAULT=data, test-only), NaN loss on rank 1 from round 1
# (FEDSILO_FAULT=nan) and honestly from a huge learning rate (--train.lr 1e6), an HDF5 write error on
# one rank outside any coordinated region (FEDSILO_FAULT=io: main aborts all ranks), and output
# folders that cannot exist (a parent is a file) or cannot be written.
# Where rank 1 fails alone (io:rank=1), report_delay_ms=0 spares the 3 s that a rank other than 0
# waits before it reports an unagreed failure (so that rank 0, if it failed in the same call, speaks
# first): rank 0 cannot fail there, and the wait lies before the error line the checks time from.
TEST_NAME=test_failures
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
LIMIT_MS=10000

# case NAME NP EXPECTED_RC PATTERN FAULT OUTPUT EXTRA_ARGS...
run_case() {
  local name=$1 np=$2 want=$3 pattern=$4 fault=$5 out=$6
  shift 6
  local d="$WORK/$name-np$np" t0 t1 rc=0
  mkdir -p "$d"
  [ "$out" = DIR ] && out="$d/out/x.h5" && mkdir -p "$d/out"
  t0=$(now_ms)
  # Every output line gets the time it was read, so the exit latency after the error line is measured.
  { FEDSILO_FAULT=$fault "$MPIEXEC" -n "$np" "$FEDSILO_EXE" "${TINY[@]}" --rounds 3 --output "$out" "$@" 2>&1 || echo "@@RC $?"; } |
    while IFS= read -r line; do printf '%s %s\n' "$(now_ms)" "$line"; done >"$d/log"
  t1=$(now_ms)
  rc=$(sed -n 's/^[0-9]* @@RC \([0-9]*\)$/\1/p' "$d/log")
  rc=${rc:-0}
  local errs nerr terr latency
  errs=$(grep -E '^[0-9]+ fedsilo: error:' "$d/log" || true)
  nerr=$(printf '%s' "$errs" | grep -c . || true)
  local what="$name (-n $np)"
  [ "$rc" = "$want" ] || fail "$what: exit code $rc, expected $want"
  if [ "$nerr" != 1 ]; then
    fail "$what: $nerr 'fedsilo: error:' lines, expected exactly 1"
    sed 's/^[0-9]* //' "$d/log" | grep -v '^ *$' | tail -8 >&2
  else
    terr=${errs%% *}
    latency=$((t1 - terr))
    ((latency < LIMIT_MS)) || fail "$what: ranks exited $latency ms after the error line (limit $LIMIT_MS ms)"
    echo "$errs" | grep -qE -- "$pattern" || fail "$what: error line does not match /$pattern/: ${errs#* }"
    log "$what: exit $rc, $((t1 - t0)) ms in all, exited $latency ms after: ${errs#* }"
  fi
  if [ -d "$(dirname "$out")" ]; then
    local left
    # A complete checkpoint from before the failure may stay (it can be resumed); nothing else may.
    left=$(ls -A "$(dirname "$out")" 2>/dev/null | grep -F "$(basename "$out")" | grep -vx "$(basename "$out").ckpt" || true)
    [ -z "$left" ] || fail "$what: left behind: $left"
  fi
}

for np in 2 4; do
  run_case data "$np" 3 "fault-injection.*does not exist" data:rank=1 DIR
  run_case nan-fault "$np" 1 "round 1: training loss became .*nan|round 1: .*(nan|inf)" nan:rank=1,round=1 DIR
  run_case nan-lr "$np" 1 "training loss became|contains (nan|-nan|inf)" "" DIR --train.lr 1e6
  run_case io-rank1 "$np" 1 "HDF5: write /rounds/" io:rank=1,round=1,report_delay_ms=0 DIR
  run_case io-rank0 "$np" 1 "HDF5: write /rounds/" io:rank=0,round=0 DIR
  run_case io-ckpt "$np" 1 "HDF5: write /rounds/" io:rank=1,round=2,report_delay_ms=0 DIR --checkpoint.every 1
  # Missing parent folders are created (test_bad_input); a parent that is a file is refused on every rank.
  : >"$WORK/a_file"
  run_case outdir-parent-is-file "$np" 2 "a_file exists and is not a folder" "" "$WORK/a_file/sub/x.h5"
  run_case outdir-unwritable "$np" 1 "cannot create" "" "/proc/fedsilo-test-$$.h5"
done
finish
