#!/usr/bin/env bash
# check_layering.sh [SRC_DIR]: checks every `#include "X/..."` line under SRC_DIR (default: the
# repository's src/) against the module layering. A file's module is the first folder below SRC_DIR
# (src/fl/algorithms/x.cpp is in fl); X is the module it includes from. Prints each include that its
# module may not use as `path:line: text (module M may include only: ...)` and exits 1 if there is one.
# CMakeLists.txt links the modules along the same matrix; this keeps the #include lines honest too
# (a header-only dependency links without complaint).
set -euo pipefail
SRC=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/src}
[ -d "$SRC" ] || { echo "check_layering: $SRC is not a directory" >&2; exit 2; }

# Which modules each module may include from (itself included).
declare -A ALLOWED=(
  [core]="core"
  [nn]="core nn"
  [optim]="core nn optim"
  [data]="core data"
  [comm]="core comm"
  [io]="core comm io"
  [privacy]="core privacy"
  [robust]="core robust"
  [compress]="core compress"
  [sim]="core sim"
  [fl]="core nn optim data comm io privacy robust compress sim fl"
  [app]="core nn optim data comm io privacy robust compress sim fl app"
)

violations=0
while IFS= read -r hit; do
  # hit: <path>:<line>:<text>
  path=${hit%%:*}
  rest=${hit#*:}
  line=${rest%%:*}
  text=${rest#*:}
  rel=${path#"$SRC"/}
  module=${rel%%/*}
  target=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^/"]+)\/.*/\1/' <<<"$text")
  if [ "$rel" = "$module" ]; then
    echo "$rel:$line: $text (a file directly in src/ belongs to no module)"
    violations=$((violations + 1))
  elif [ -z "${ALLOWED[$module]+set}" ]; then
    echo "$rel:$line: $text (module $module is not in the layering matrix of tools/check_layering.sh)"
    violations=$((violations + 1))
  elif [[ " ${ALLOWED[$module]} " != *" $target "* ]]; then
    echo "$rel:$line: $text (module $module may include only: ${ALLOWED[$module]})"
    violations=$((violations + 1))
  fi
done < <(grep -rnE --include='*.cpp' --include='*.hpp' --include='*.h' \
           '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^/"]+/' "$SRC" | sort)

if [ "$violations" -ne 0 ]; then
  echo "check_layering: $violations include(s) break the module layering" >&2
  exit 1
fi
echo "check_layering: every #include \"X/...\" under $SRC respects the module layering"
