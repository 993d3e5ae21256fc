#!/usr/bin/env bash
# own_tmpdir.sh COMMAND...: runs COMMAND with a TMPDIR of its own, removed afterwards, and exits with its
# status. ctest runs tests side by side, and the fedsilo processes they start without mpirun are isolated
# Open MPI singletons (OMPI_MCA_ess_singleton_isolated, tests/CMakeLists.txt): every such singleton keeps
# its session files in the same folder under TMPDIR, and one that exits removes that folder while a
# singleton of another test may be creating it (MPI_Init then fails: "mkdir was unable to create").
set -u
dir=$(mktemp -d "${TMPDIR:-/tmp}/fedsilo-test.XXXXXX") || exit 1
# Reachable by everyone, as /tmp is: munged (test_slurm) refuses a socket below a folder that is not.
chmod 755 "$dir"
trap 'rm -rf "$dir"' EXIT
TMPDIR=$dir "$@"
