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

A section header `[SECTION @ ALGORITHM, ...]` scopes SECTION's keys (written as under `[SECTION]`) to the
named algorithms: they apply only when one of them runs. SECTION is one of the experiment sections
(`train partition data model fl eval output checkpoint`; an algorithm's own section applies only when it
runs anyway). Precedence: the command line, then the sections scoped to the running algorithm, then the
plain keys and sections, then the defaults. The resolved configuration (`--dry-run`, the results file's
`config`, the `--resume` comparison) holds the effective values, exactly as if the scoped keys had been
given on the command line. A scoped section of an algorithm that does not run is still checked: an
unknown key, a value of the wrong type or range, a combination the experiment's rules refuse (read as
that algorithm's run with the same command line would read it), an unknown algorithm name, a section
that cannot be scoped or one scoped twice to an algorithm are errors (exit 2) naming the file, the
section and its line. For example, PLayer-FL's protocol trains with Adam but pfedme's update is its own
inner SGD (configs/playerfl_fmnist.ini):

```ini
[train]
optimizer = adam
amsgrad = true

[train @ pfedme]
optimizer = sgd
amsgrad = false
```

Exit codes: 0 success; 2 bad command line or configuration; 3 bad or missing input data; 1 anything else
(numerical divergence, I/O, MPI). See docs/hpc.md for the checkpoint/interrupt codes.

This page is generated from `fedsilo --help` by `tools/gen_cli_doc.sh`; a test fails when they differ.

```text
HEAD
  "$EXE" --help
  echo '```'
} >"$ROOT/docs/cli.md"
echo "wrote docs/cli.md"
