#!/usr/bin/env bash
# Regenerates docs/cli.md from `fedsilo --help` (tests/integration/test_docs_cli.sh checks they agree).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EXE=${1:-$ROOT/build/fedsilo}
{
  cat <<'HEAD'
# Command line and configuration reference

`fedsilo --config FILE.ini [--section.key value ...]`. Every option can be given in the INI file (top-level
`key = value`, or `key = value` under `[section]`) or on the command line as `--section.key value`; the
command line wins, and a later occurrence on the command line overrides an earlier one. Unknown options,
duplicated keys in the INI file, and values outside their documented range are errors (exit code 2) with a
one-line message naming the option and the value.

Exit codes: 0 success; 2 bad command line or configuration; 3 bad or missing input data; 1 anything else
(numerical divergence, I/O, MPI). See docs/hpc.md for the checkpoint/interrupt codes.

This page is generated from `fedsilo --help` by `tools/gen_cli_doc.sh`; a test fails when they differ.

```text
HEAD
  "$EXE" --help
  echo '```'
} >"$ROOT/docs/cli.md"
echo "wrote docs/cli.md"
