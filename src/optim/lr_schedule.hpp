// The learning rate of each round (train.lr_schedule), as PyTorch's schedulers give it when stepped
// once per round (closed forms, round t = 0, 1, ...; lr0 = train.lr):
//   constant     lr0
//   step         lr0 * gamma^floor(t / step_rounds)                        (StepLR)
//   exponential  lr0 * gamma^t                                             (ExponentialLR)
//   cosine       lr_min + (lr0 - lr_min) (1 + cos(pi t / rounds)) / 2      (CosineAnnealingLR, T_max = rounds)
// The end-of-training client hooks (round = rounds, e.g. FedBABU's fine-tuning) use the last round's lr.
#pragma once
#include "core/config.hpp"

namespace fedsilo {

double scheduledLr(const TrainConfig& t, int round, int rounds);
// `t` with lr replaced by the schedule's value for `round`.
TrainConfig trainingForRound(const TrainConfig& t, int round, int rounds);

}  // namespace fedsilo
