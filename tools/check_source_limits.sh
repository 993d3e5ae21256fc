#!/usr/bin/env bash
# check_source_limits.sh [SRC_DIR]: the size limits of the code under SRC_DIR (default: the
# repository's src/): no function longer than MAX_FUNCTION_LINES (80) and no source file longer than
# MAX_FILE_LINES (600). A function's length runs from the line with its name to its closing brace, as
# universal-ctags reports them (lambdas count towards the function that holds them). Prints each
# offender as `path:line: function NAME is N lines (limit L)` or `path: N lines (limit L)`, the longest
# first, and exits 1 if there is one; exits 2 when universal-ctags is missing (jobs/packages.sh lists it).
set -euo pipefail
SRC=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/src}
MAX_FUNCTION=${MAX_FUNCTION_LINES:-80}
MAX_FILE=${MAX_FILE_LINES:-600}
[ -d "$SRC" ] || { echo "check_source_limits: $SRC is not a directory" >&2; exit 2; }
if ! ctags --version 2>/dev/null | grep -q "Universal Ctags"; then
  echo "check_source_limits: needs universal-ctags (apt-get install universal-ctags)" >&2
  exit 2
fi

SRC=$(cd "$SRC" && pwd)
cd "$SRC"
prefix=$(basename "$SRC")  # offenders are named src/fl/x.cpp, relative to SRC's parent
files=$(find . -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cc' \) | sed 's|^\./||' | sort)
[ -n "$files" ] || { echo "check_source_limits: no C++ sources under $SRC" >&2; exit 2; }

# Functions: "<end> <line> <name> <path>" for every function definition (kind f; prototypes are p).
# shellcheck disable=SC2086 # $files is a list of paths without spaces
long_functions=$(ctags --languages=C++ --language-force=C++ --kinds-C++=f --fields=+ne -x \
                   --_xformat='%{end} %{line} %N %F' -o - $files |
                 awk -v max="$MAX_FUNCTION" -v pre="$prefix" '$1 ~ /^[0-9]+$/ { n = $1 - $2 + 1; if (n > max)
                   printf "%d %s/%s:%s: function %s is %d lines (limit %d)\n", n, pre, $4, $2, $3, n, max }' |
                 sort -rn | cut -d' ' -f2-)
# shellcheck disable=SC2086
long_files=$(wc -l $files | awk -v max="$MAX_FILE" -v pre="$prefix" '$2 != "total" && $1 > max {
               printf "%d %s/%s: %d lines (limit %d)\n", $1, pre, $2, $1, max }' | sort -rn | cut -d' ' -f2-)

status=0
if [ -n "$long_functions" ]; then
  printf '%s\n' "$long_functions"
  status=1
fi
if [ -n "$long_files" ]; then
  printf '%s\n' "$long_files"
  status=1
fi
exit $status
