#include "optim/lr_schedule.hpp"

#include <algorithm>
#include <cmath>

namespace fedsilo {

double scheduledLr(const TrainConfig& t, int round, int rounds) {
  const int r = std::clamp(round, 0, std::max(rounds - 1, 0));
  switch (t.lrSchedule) {
    case LrSchedule::Constant: return t.lr;
    case LrSchedule::Step: return t.lr * std::pow(t.lrGamma, static_cast<double>(r / std::max(t.lrStepRounds, 1)));
    case LrSchedule::Exponential: return t.lr * std::pow(t.lrGamma, static_cast<double>(r));
    case LrSchedule::Cosine: {
      const double pi = std::acos(-1.0);
      return t.lrMin + (t.lr - t.lrMin) * (1.0 + std::cos(pi * r / std::max(rounds, 1))) / 2.0;
    }
  }
  return t.lr;
}

TrainConfig trainingForRound(const TrainConfig& t, int round, int rounds) {
  TrainConfig out = t;
  out.lr = scheduledLr(t, round, rounds);
  return out;
}

}  // namespace fedsilo
