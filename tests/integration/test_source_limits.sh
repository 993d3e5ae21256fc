#!/usr/bin/env bash
# label: unit
# timeout: 60
# Size limits and names: no function in src/ longer than 80 lines and no source file over 600 lines
# (tools/check_source_limits.sh), checked on src/ and, so that the checker is known to catch them, on a
# small tree with one offender of each kind; and every C++ test source is named <what>_test.cpp.
source "$(dirname "$0")/lib/common.sh"
CHECK=$FEDSILO_SOURCE_DIR/tools/check_source_limits.sh

if out=$(bash "$CHECK" "$FEDSILO_SOURCE_DIR/src" 2>&1); then
  pass "src/: no function over 80 lines, no file over 600 lines"
else
  printf '%s\n' "$out" >&2
  fail "src/ breaks the size limits (lines above)"
fi

# A tree with an 81-line function (name on line 3), an 80-line one, and a 601-line file.
TREE=$TMP/tree/src
mkdir -p "$TREE/fl" "$TREE/nn"
body() { for ((i = 0; i < $1; ++i)); do echo "  x += $i;"; done; }
{
  echo '#include "fl/long.hpp"'
  echo ''
  echo 'int tooLong(int x) {'
  body 79
  echo '}'
  echo 'int justRight(int x) {'
  body 78
  echo '}'
} >"$TREE/fl/long.cpp"
{ echo '// filler'; for ((i = 0; i < 600; ++i)); do echo "int v$i = $i;"; done; } >"$TREE/nn/big.hpp"
rc=0
out=$(bash "$CHECK" "$TREE" 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "a tree with offenders: exit $rc, expected 1 (output: $out)"
for want in 'src/fl/long.cpp:3: function tooLong is 81 lines (limit 80)' 'src/nn/big.hpp: 601 lines (limit 600)'; do
  grep -qxF -- "$want" <<<"$out" && pass "reported: $want" || fail "not reported: $want; output: $out"
done
grep -q justRight <<<"$out" && fail "an 80-line function was reported: $out"
[ "$(wc -l <<<"$out")" = 2 ] || fail "expected exactly two offenders, got: $out"

# Test sources: tests/<module>/<what>_test.cpp; helpers live in tests/support or are headers.
bad_names=$(cd "$FEDSILO_SOURCE_DIR/tests" && find . -name '*.cpp' ! -path './support/*' ! -name '*_test.cpp' | sort)
if [ -z "$bad_names" ]; then
  pass "every C++ test source is named *_test.cpp"
else
  fail "C++ test sources not named <what>_test.cpp: $(echo $bad_names)"
fi

finish
