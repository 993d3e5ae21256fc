#!/usr/bin/env bash
# label: long
# timeout: 2400
# Kill-and-resume for EVERY algorithm of the registry (test_resume.sh with RESUME_ALGORITHMS=registry;
# that file says what is checked). About 3 minutes here; run before resolving work that touches an
# algorithm's state, checkpoints or the round driver: tests/run.sh -L long, or ctest -R resume_registry.
RESUME_ALGORITHMS=registry exec bash "$(dirname "${BASH_SOURCE[0]}")/test_resume.sh"
