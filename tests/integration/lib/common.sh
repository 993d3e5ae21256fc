# Shared helpers for the foundation integration tests (sourced, not run; lives in lib/ so ctest does not register it).
set -euo pipefail
: "${FEDSILO_EXE:?run through ctest (FEDSILO_EXE unset)}"
: "${FEDSILO_SOURCE_DIR:?run through ctest}"
MPIEXEC=${MPIEXEC:-mpirun}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=1
PY=/usr/bin/python3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fedsilo_it.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }
finish() {
  if [ "$FAILS" -ne 0 ]; then echo "$FAILS check(s) failed" >&2; exit 1; fi
  echo "all checks passed"
}
# A small, fast experiment: 100 FashionMNIST samples per client, a 16-unit MLP.
SMALL=(--clients 4 --rounds 2 --model.hidden 16 --partition.samples_per_client 100 --train.batch 16 --eval.batch 100)
