#!/usr/bin/env bash
# label: unit
# timeout: 180
# The module layering holds in the #include lines of src/ (tools/check_layering.sh), and the checker
# really catches a violation: on a small tree with one forbidden include it must fail and name the line.
source "$(dirname "$0")/lib/common.sh"
CHECK=$FEDSILO_SOURCE_DIR/tools/check_layering.sh

if out=$(bash "$CHECK" "$FEDSILO_SOURCE_DIR/src" 2>&1); then
  pass "src/ respects the module layering"
else
  printf '%s\n' "$out" >&2
  fail "src/ breaks the module layering (lines above)"
fi

# A tree with allowed includes only: fl may use io, app may use everything, nested folders count as
# their top module.
mk() { mkdir -p "$(dirname "$1")" && printf '%s\n' "${@:2}" >"$1"; }
GOOD=$TMP/good/src
mk "$GOOD/core/a.hpp" '#pragma once' '#include <vector>'
mk "$GOOD/io/w.cpp" '#include "io/w.hpp"' '#include "comm/c.hpp"' '#include "core/a.hpp"'
mk "$GOOD/fl/algorithms/x.cpp" '#include "io/w.hpp"' '#include "nn/m.hpp"' '#include "x_local.hpp"'
mk "$GOOD/app/main.cpp" '#include "fl/x.hpp"' '#include "privacy/p.hpp"'
if out=$(bash "$CHECK" "$GOOD" 2>&1); then pass "allowed includes pass"; else fail "allowed includes rejected: $out"; fi

# One forbidden include each: io -> fl, core -> nn (indented, as inside an #if), data -> comm.
BAD=$TMP/bad/src
cp -r "$GOOD" "$TMP/bad/"
mk "$BAD/io/r.cpp" '#include "io/r.hpp"' '' '#include "fl/fairness.hpp"'
mk "$BAD/core/b.hpp" '#pragma once' '#if 1' '  #  include "nn/layer.hpp"' '#endif'
mk "$BAD/data/d.cpp" '#include "comm/communicator.hpp"'
rc=0
out=$(bash "$CHECK" "$BAD" 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "a tree with forbidden includes: exit $rc, expected 1"
for want in 'io/r.cpp:3: #include "fl/fairness.hpp" (module io may include only: core comm io)' \
            'core/b.hpp:3:   #  include "nn/layer.hpp" (module core may include only: core)' \
            'data/d.cpp:1: #include "comm/communicator.hpp" (module data may include only: core data)'; do
  grep -qxF -- "$want" <<<"$out" && pass "reported: $want" || fail "not reported: $want; output: $out"
done
n=$(grep -c 'may include only' <<<"$out" || true)
[ "$n" = 3 ] || fail "$n violations reported, expected exactly 3: $out"

# A module missing from the matrix is an error, not a silent pass.
mk "$TMP/new/src/gpu/k.cpp" '#include "core/a.hpp"'
rc=0
out=$(bash "$CHECK" "$TMP/new/src" 2>&1) || rc=$?
[ "$rc" = 1 ] && grep -q 'module gpu is not in the layering matrix' <<<"$out" && pass "an unknown module fails" \
  || fail "an unknown module: exit $rc: $out"
finish
