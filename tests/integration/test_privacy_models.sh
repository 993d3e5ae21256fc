#!/usr/bin/env bash
# label: long
# timeout: 1800
# Privacy in real runs on EVERY DP-SGD model family (test_privacy.sh with PRIVACY_MODELS=all; that file
# says what is checked): the default run leaves cnn_playerfl and transformer_playerfl out of the rank
# invariance, cnn_mcmahan and transformer_playerfl out of kill-and-resume, and the private run of the
# PLayer-FL CIFAR-10 configuration out altogether. Run it before resolving
# work that touches per-example norms, DP-SGD or the accountant: tests/run.sh -L long, or
# ctest -R test_privacy_models.
PRIVACY_MODELS=all exec bash "$(dirname "${BASH_SOURCE[0]}")/test_privacy.sh"
