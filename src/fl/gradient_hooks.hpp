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

// Freezes the parameters outside [begin, end) (FedBABU's frozen head and body, the one-shot
// algorithms' last-block fine-tuning): the optimizer updates only [begin, end) (GradientHook's
// trainable range), so frozen parameters and their optimizer state do not move whatever the
// optimizer, momentum and weight decay are. Their gradient is also set to -wd * theta, the value
// whose L2-decayed step g + wd * theta is zero, for code that reads the gradient after the hook.
GradientHook freezeOutsideHook(std::size_t begin, std::size_t end, double weightDecay);

}  // namespace fedsilo
