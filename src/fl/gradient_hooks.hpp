// GradientHooks shared by several algorithms: how they change the objective of the one training
// loop (fl/local_trainer.hpp) without copying it.
#pragma once
#include <cstddef>

#include "fl/local_trainer.hpp"

namespace fedsilo {

// g_i += mu * (theta_i - ref_i): the gradient of mu/2 ||theta - ref||^2 (FedProx's proximal term,
// Ditto's and pFedMe's regularisers). `ref` must outlive the hook and may change between steps
// (pFedMe's local model).
GradientHook proximalHook(double mu, const float* ref);

// Zeroes the effective gradient of parameters outside [begin, end) (the trainable range):
// g <- -wd * theta there, so that SGD's weight decay (g + wd * theta) is 0, the momentum velocity
// stays 0 and they do not move, whatever momentum and weight decay are (FedBABU's frozen head and
// body, the one-shot algorithms' last-block fine-tuning).
GradientHook freezeOutsideHook(std::size_t begin, std::size_t end, double weightDecay);

}  // namespace fedsilo
