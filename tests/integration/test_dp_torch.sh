#!/usr/bin/env bash
# label: torch
# timeout: 300
# cost: 20
# skip_return_code: 77
# DP-SGD's per-example clipping against PyTorch (docs/privacy.md, "Per-example clipping"): on the
# cnn_mcmahan and lstm presets, fedsilo_dp_norms writes one batch, the float model's parameters, its
# per-example gradient norms and clipped sum; tests/integration/lib/dp_torch_reference.py loads the same
# parameters into the PyTorch model, forms each sample's gradient by a backward pass on it alone (float64),
# and checks both to 1e-4 relative. Needs Debian's python3-torch: without it the test reports itself
# skipped (exit 77), never passed; `ctest -L torch` runs it alone.
TEST_NAME=test_dp_torch
source "$(dirname "${BASH_SOURCE[0]}")/lib/hpc_common.sh"
if ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "$TEST_NAME: skipped: $PY cannot import torch (Debian's python3-torch)"
  exit 77
fi
make_workdir
for preset in cnn_mcmahan lstm; do
  mkdir "$WORK/$preset"
  "$FEDSILO_DP_NORMS" "$preset" "$WORK/$preset" || die "fedsilo_dp_norms $preset failed"
  "$PY" "$FEDSILO_SOURCE_DIR/tests/integration/lib/dp_torch_reference.py" "$WORK/$preset" &&
    log "$preset: per-example norms and clipped sum agree with PyTorch's per-sample gradients" ||
    fail "$preset: fedsilo and PyTorch differ (above)"
done
finish
