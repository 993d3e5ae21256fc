#!/usr/bin/env bash
# label: long
# timeout: 3600
# The fault soak of test_fault_soak.sh with many cycles: FEDSILO_SOAK_CYCLES (default 100, about
# 10 minutes here); FEDSILO_SOAK_SEED replays a sequence of choices. Label long: `ctest -L long`.
export FEDSILO_SOAK_CYCLES=${FEDSILO_SOAK_CYCLES:-100}
exec bash "$(dirname "${BASH_SOURCE[0]}")/test_fault_soak.sh"
