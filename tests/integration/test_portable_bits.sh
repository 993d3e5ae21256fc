#!/usr/bin/env bash
# label: long
# timeout: 3000
# cost: 1200
# The native build (the one under test) and the portable build (FEDSILO_NATIVE=OFF: x86-64-v2, no FMA
# outside the run-time dispatched kernels) give the same bits for what docs/performance.md ("Element-wise
# numerics") says they do: 2-round runs with Adam (AMSGrad, L2) and AdamW on the MLP and Adam on
# cnn_mcmahan have identical models, losses and accuracies. The portable fedsilo is built from this
# source tree into a temporary folder (only the fedsilo target; ccache makes it cheap where it is set up),
# or taken from FEDSILO_PORTABLE_EXE when that names one built from the same sources.
source "$(dirname "$0")/lib/common.sh"

PORTABLE=${FEDSILO_PORTABLE_EXE:-}
if [ -z "$PORTABLE" ]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S "$FEDSILO_SOURCE_DIR" -B "$TMP/portable" "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DFEDSILO_NATIVE=OFF -DFEDSILO_BUILD_TESTS=OFF -DFEDSILO_BUILD_BENCH=OFF -DFEDSILO_MAN=OFF \
    -DFEDSILO_INSTALL=OFF >"$TMP/configure.log" 2>&1 || { tail -20 "$TMP/configure.log"; fail "configuring the portable build failed"; finish; }
  cmake --build "$TMP/portable" -j "${FEDSILO_BUILD_JOBS:-2}" --target fedsilo >"$TMP/build.log" 2>&1 \
    || { tail -20 "$TMP/build.log"; fail "building the portable fedsilo failed"; finish; }
  PORTABLE=$TMP/portable/fedsilo
fi
[ -x "$PORTABLE" ] && pass "portable fedsilo: $PORTABLE" || { fail "no portable fedsilo at $PORTABLE"; finish; }

same_results() {
  "$PY" - "$1" "$2" <<'PYEOF'
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
for n in ("model/global", "rounds/client_loss", "rounds/client_accuracy", "rounds/global_loss"):
    if not np.array_equal(a[n][:], b[n][:], equal_nan=True):
        x, y = a[n][:].astype(float), b[n][:].astype(float)
        print("differs:", n, "by up to", np.nanmax(np.abs(x - y))); sys.exit(1)
PYEOF
}

compare() {
  local name=$1
  shift
  local args=("${SMALL[@]}" "$@")
  "$MPIEXEC" -n 2 "$FEDSILO_EXE" "${args[@]}" --output "$TMP/$name-native.h5" >"$TMP/$name-native.log" 2>&1 \
    || { cat "$TMP/$name-native.log"; fail "$name: the native run failed"; return; }
  "$MPIEXEC" -n 2 "$PORTABLE" "${args[@]}" --output "$TMP/$name-portable.h5" >"$TMP/$name-portable.log" 2>&1 \
    || { cat "$TMP/$name-portable.log"; fail "$name: the portable run failed"; return; }
  same_results "$TMP/$name-native.h5" "$TMP/$name-portable.h5" && pass "$name: native and portable builds agree bit for bit" \
    || fail "$name: the native and portable builds differ"
}

compare mlp-adam-amsgrad --train.optimizer adam --train.lr 0.001 --train.amsgrad true --train.weight_decay 0.01
compare mlp-adamw --train.optimizer adamw --train.lr 0.001 --train.weight_decay 0.1
compare cnn-adam --model cnn_mcmahan --train.optimizer adam --train.lr 0.001
finish
