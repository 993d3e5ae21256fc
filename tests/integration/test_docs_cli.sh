#!/usr/bin/env bash
# label: integration
# timeout: 180
# docs/cli.md must show exactly what `fedsilo --help` prints today (regenerate: tools/gen_cli_doc.sh), and
# --help must list every environment variable the binary reads.
source "$(dirname "$0")/lib/common.sh"
doc=$FEDSILO_SOURCE_DIR/docs/cli.md
sed -n '/^```text$/,/^```$/p' "$doc" | sed '1d;$d' >"$TMP/doc_help"
"$FEDSILO_EXE" --help >"$TMP/help"
if diff -u "$TMP/doc_help" "$TMP/help" >"$TMP/diff"; then pass "docs/cli.md matches --help"; else cat "$TMP/diff" >&2; fail "docs/cli.md is out of date: run tools/gen_cli_doc.sh"; fi
# Every FEDSILO_* variable the binary reads (a getenv("FEDSILO_...") in src/) is listed under Environment:.
sed -n '/^Environment:$/,$p' "$TMP/help" >"$TMP/env_help"
read_vars=$(grep -rhoE 'getenv\("FEDSILO_[A-Z0-9_]+"' "$FEDSILO_SOURCE_DIR/src" | sed 's/.*"\(.*\)"/\1/' | sort -u)
[ -n "$read_vars" ] || fail 'no getenv("FEDSILO_...") found in src/: the check below would check nothing'
for v in $read_vars; do
  if grep -q "^  $v=" "$TMP/env_help"; then pass "--help lists $v"; else fail "--help's Environment: part lacks $v"; fi
done
# ... and every other variable it reads (the launcher's), named anywhere in that part.
other_vars=$(grep -rhoE 'getenv\("[A-Z][A-Z0-9_]+"' "$FEDSILO_SOURCE_DIR/src" | sed 's/.*"\(.*\)"/\1/' | grep -v '^FEDSILO_' | sort -u)
for v in $other_vars; do
  if grep -qw "$v" "$TMP/env_help"; then pass "--help names $v"; else fail "--help's Environment: part does not name $v"; fi
done
# Every shipped config uses only known options with valid values.
# --dry-run reads the configs' input files (partition files are relative to the repository root);
# --overwrite: a finished results file at a config's own output (an earlier run of it) is not a parse error.
# CIFAR-10 and EMNIST are not shipped: those configs read small generated files of the same formats.
"$PY" "$FEDSILO_SOURCE_DIR/tests/integration/lib/image_data.py" "$TMP/images" || fail "could not generate the image data"
cd "$FEDSILO_SOURCE_DIR"
for ini in "$FEDSILO_SOURCE_DIR"/configs/*.ini; do
  data=()
  for d in cifar10 emnist; do grep -q "^dataset = $d$" "$ini" && data=(--data.dir "$TMP/images/$d"); done
  if out=$("$FEDSILO_EXE" --config "$ini" "${data[@]}" --overwrite --dry-run 2>&1); then pass "$(basename "$ini") is valid"; else fail "$(basename "$ini"): $out"; fi
done
finish
