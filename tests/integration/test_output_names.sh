#!/usr/bin/env bash
# label: integration
# timeout: 600
# Output names against Open MPI's MPI-IO limits (docs/hpc.md, "File names"), with the real MPI-IO at
# 2 ranks and a checkpoint every round, so that every derived name (<output>.partial, .ckpt.tmp,
# .ckpt) is opened through MPI-IO:
#  * the limit is read from fedsilo's own refusal of a far too long name (exit 2, naming the name,
#    its length and the limit);
#  * a results file whose longest derived name, <output>.ckpt.tmp, is exactly at the limit runs to the
#    end (exit 0) with the result of a short name: the limit is one MPI-IO can take;
#  * one character more is refused at start-up with exit 2 naming <output>.ckpt.tmp, its length and the
#    limit, and leaves nothing behind (before the check, such names aborted inside Open MPI with
#    "buffer overflow detected" or failed with exit 1, leaving .partial or .ckpt.tmp);
#  * the same for the whole path (a short name in deep folders).
TEST_NAME=test_output_names
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
make_workdir
cd "$WORK"

BASE=("${TINY[@]}" --rounds 2 --seed 4 --checkpoint.every 1)
run() {  # run LOG ARGS...: sets RC
  local logf=$1
  shift
  RC=0
  "$MPIEXEC" -n 2 "$FEDSILO_EXE" "$@" >"$logf" 2>&1 || RC=$?
}
xs() { printf "$1%.0s" $(seq "$2"); }  # xs CHAR N: N times CHAR

run ref.log "${BASE[@]}" --output ref.h5
[ "$RC" = 0 ] || die "reference run exited $RC: $(tail -3 ref.log)"

# limit_of KIND LOG: the limit named in a refusal of KIND ("file name" or "path") of Open MPI's MPI-IO.
limit_of() { sed -n "s/.*the $1 (Open MPI's MPI-IO) of .* is [0-9]* characters long, above the limit of \([0-9]*\).*/\1/p" "$2"; }

# at_and_over KIND DIR PREFIX PROBE: PREFIX + a name whose .ckpt.tmp is at the limit of KIND runs, one more
# is refused; a name of PROBE characters after PREFIX is over that limit and within the file system's.
at_and_over() {
  local kind=$1 dir=$2 prefix=$3 probe=$4
  mkdir -p "$dir"
  run "$dir/probe.log" "${BASE[@]}" --output "$prefix$(xs z "$probe").h5"
  local limit
  limit=$(limit_of "$kind" "$dir/probe.log")
  [ "$RC" = 2 ] && [ -n "$limit" ] ||
    fail "$kind: a far too long name: exit $RC, expected 2 naming the MPI-IO limit: $(grep -m1 error "$dir/probe.log")"
  [ -n "$limit" ] || return
  # The longest derived name is <output>.ckpt.tmp: 9 characters after <output>, which ends in ".h5".
  local counted=$prefix
  [ "$kind" = "file name" ] && counted=""
  local at=$prefix$(xs a $((limit - ${#counted} - 9 - 3))).h5
  local over=$prefix$(xs b $((limit - ${#counted} - 9 - 2))).h5
  run "$dir/at.log" "${BASE[@]}" --output "$at"
  [ "$RC" = 0 ] || fail "$kind: $at.ckpt.tmp at the limit of $limit: exit $RC: $(grep -m1 -iE 'error|overflow' "$dir/at.log")"
  grep -q 'checkpoint before round 1' "$dir/at.log" || fail "$kind: the run at the limit wrote no checkpoint"
  [ "$RC" = 0 ] && { h5_same ref.h5 "$at" || fail "$kind: the run at the limit differs from a short name's"; }
  run "$dir/over.log" "${BASE[@]}" --output "$over"
  local msg
  msg=$(grep -m1 'fedsilo: error' "$dir/over.log" || true)
  [ "$RC" = 2 ] || fail "$kind: one character over the limit: exit $RC, expected 2: $(grep -m1 -iE 'error|overflow' "$dir/over.log")"
  grep -qF "$over.ckpt.tmp is $((limit + 1)) characters long, above the limit of $limit" <<<"$msg" ||
    fail "$kind: the refusal does not name $over.ckpt.tmp, its length and the limit: $msg"
  [ "$(grep -c 'fedsilo: error' "$dir/over.log")" = 1 ] || fail "$kind: the refusal is not one line"
  local left
  left=$(ls -A "$(dirname "$over")" | grep -F "$(basename "$over")" || true)
  [ -z "$left" ] || fail "$kind: the refused run left $left"
  log "$kind: limit $limit; at the limit exit 0, over it: $msg"
}

at_and_over "file name" names "" 240
# Deep folders with a short file name: the path as given to MPI-IO is what counts.
deep=$WORK/paths
while [ ${#deep} -lt 190 ]; do deep+=/d; done
mkdir -p "$deep"
at_and_over path "$WORK/paths" "$deep/" 60
finish
