#!/usr/bin/env bash
# gen_man_page.sh EXE OUT: writes the man page OUT (fedsilo.1, roff -man) from `EXE --help`, so that the
# page says exactly what the binary accepts. The build runs it (cmake/man_page.cmake) and installs the
# result to share/man/man1; tests/integration/test_install_example.sh renders the installed page and
# checks it against --help. The sections follow --help: the usage line (SYNOPSIS), each options group
# (OPTIONS), the algorithm list (ALGORITHMS) and the exit codes (EXIT STATUS).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: gen_man_page.sh FEDSILO_EXE OUT.1" >&2; exit 2; }
EXE=$1 OUT=$2
help=$("$EXE" --help) || { echo "gen_man_page.sh: '$EXE --help' failed" >&2; exit 1; }
tmp=$(mktemp "$OUT.XXXXXX")
trap 'rm -f "$tmp"' EXIT
awk '
# roff-safe text: backslashes first, then hyphens (\- keeps options copyable), a leading . or '"'"' escaped.
function esc(s) {
  gsub(/\\/, "\\e", s)
  gsub(/-/, "\\-", s)
  if (s ~ /^[.'"'"']/) s = "\\&" s
  return s
}
function flush() {
  if (item != "") {
    print ".TP"
    print "\\fB" esc(item) "\\fR"
    if (desc != "") print esc(desc)
  }
  item = ""; desc = ""
}
NR == 1 {
  # "fedsilo 0.1.0: cross-silo federated learning on MPI"
  split($0, head, ": ")
  version = head[1]; sub(/^[^ ]+ /, "", version)
  what = substr($0, length(head[1]) + 3)
  print ".TH FEDSILO 1 \"\" \"fedsilo " version "\" \"User Commands\""
  print ".SH NAME"
  print "fedsilo \\- " esc(what)
  next
}
/^usage: / {
  sub(/^usage: /, "")
  print ".SH SYNOPSIS"
  print esc($0)
  mode = "usage"
  next
}
# The usage block goes on until the first empty line (the line of the epsilon subcommand, its note).
mode == "usage" && NF > 0 { line = $0; sub(/^ +/, "", line); print ".br"; print esc(line); next }
mode == "usage" {
  mode = ""
  print ".SH DESCRIPTION"
  print "Every experiment option can be given in the INI file named by \\fB\\-\\-config\\fR (top\\-level"
  print "\\fIkey = value\\fR, or \\fIkey = value\\fR under \\fI[section]\\fR) or on the command line as"
  print "\\fB\\-\\-section.key value\\fR; the command line wins. \\fBfedsilo epsilon\\fR answers privacy"
  print "accounting questions (epsilon for a noise multiplier, or the reverse) without MPI or training."
  print ".SH OPTIONS"
  next
}
/^Exit codes: / { flush(); mode = "exit"; print ".SH EXIT STATUS"; sub(/^Exit codes: /, ""); print esc($0); next }
mode == "exit" && NF > 0 { print esc($0); next }
/^Algorithms:$/ { flush(); mode = "algorithms"; print ".SH ALGORITHMS"; next }
/^[A-Z][^:]*.*:$/ { flush(); mode = "options"; sub(/:$/, ""); print ".SS \"" esc($0) "\""; next }
mode == "algorithms" && /^  [a-z0-9_]+: / {
  flush()
  line = substr($0, 3)
  item = substr(line, 1, index(line, ":") - 1)
  desc = substr(line, index(line, ":") + 2)
  next
}
mode == "options" && /^  -/ {
  flush()
  line = substr($0, 3)
  cut = index(line, "  ")
  if (cut == 0) { item = line; desc = "" }
  else { item = substr(line, 1, cut - 1); desc = substr(line, cut); sub(/^ +/, "", desc) }
  sub(/ +$/, "", desc)
  next
}
mode == "options" && /^          / && item != "" {
  line = $0; sub(/^ +/, "", line); sub(/ +$/, "", line)
  desc = desc == "" ? line : desc " " line
  next
}
NF == 0 { flush(); next }
END {
  flush()
  print ".SH FILES"
  print "The results file \\fI<output>\\fR, written as \\fI<output>.partial\\fR until complete; checkpoints"
  print "\\fI<output>.ckpt\\fR (see \\fB\\-\\-resume\\fR)."
  print ".SH SEE ALSO"
  print "\\fBfedsilo\\-analysis \\-\\-help\\fR, \\fBmpirun\\fR(1), \\fBsrun\\fR(1);"
  print "the documentation in the source tree: README.md, docs/cli.md, docs/hpc.md, docs/extending.md."
}
' <<<"$help" >"$tmp"
chmod 644 "$tmp"
mv "$tmp" "$OUT"
trap - EXIT
