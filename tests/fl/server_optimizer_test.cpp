// FedOpt's server optimizers (fl/server_optimizer.hpp; Reddi et al. 2021, Algorithm 2) over three
// steps each, against values worked out by hand from the update rules. The pseudo-gradients are chosen
// so that every second moment is a perfect square and the expected parameters are short fractions.
#include <gtest/gtest.h>

#include <vector>

#include "fl/server_optimizer.hpp"

namespace fedsilo {
namespace {

ServerOptimizerConfig config(ServerOptimizerKind kind, double lr, double beta1, double beta2, double tau) {
  ServerOptimizerConfig c;
  c.kind = kind;
  c.lr = lr;
  c.momentum = beta1;
  c.beta1 = beta1;
  c.beta2 = beta2;
  c.tau = tau;
  return c;
}

// One step of a one-parameter optimizer towards the aggregate x + delta; returns the new x.
float stepBy(ServerOptimizer& opt, float& x, double delta) {
  const double target = static_cast<double>(x) + delta;
  opt.step(0, 1, &target, &x);
  return x;
}

TEST(ServerOptimizer, MomentumIsFedAvgM) {
  // beta = 0.5, eta = 0.5, x = 1:
  //   Delta = 1:     m = 0.5*0 + 1 = 1,          x = 1 + 0.5*1 = 1.5
  //   Delta = -0.5:  m = 0.5*1 - 0.5 = 0,        x = 1.5
  //   Delta = 0.25:  m = 0 + 0.25 = 0.25,        x = 1.5 + 0.5*0.25 = 1.625
  ServerOptimizer opt(config(ServerOptimizerKind::Momentum, 0.5, 0.5, 0.0, 1.0), 1);
  float x = 1.0f;
  EXPECT_EQ(stepBy(opt, x, 1.0), 1.5f);
  EXPECT_EQ(stepBy(opt, x, -0.5), 1.5f);
  EXPECT_EQ(stepBy(opt, x, 0.25), 1.625f);
}

TEST(ServerOptimizer, MomentumWithoutMomentumAndUnitRateSetsTheAggregate) {
  ServerOptimizer opt(config(ServerOptimizerKind::Momentum, 1.0, 0.0, 0.0, 1.0), 2);
  std::vector<float> x{0.25f, -3.0f};
  const std::vector<double> target{0.75, 2.5};
  opt.step(0, 2, target.data(), x.data());
  EXPECT_EQ(x, (std::vector<float>{0.75f, 2.5f}));
}

TEST(ServerOptimizer, Adagrad) {
  // beta1 = 0.5, tau = 0.75 (v starts at 0.5625), eta = 1, x = 1:
  //   Delta = 1:    m = 0.5,     v = 0.5625 + 1 = 1.5625 = 1.25^2,     x = 1 + 0.5/(1.25+0.75) = 1.25
  //   Delta = 3:    m = 1.75,    v = 1.5625 + 9 = 10.5625 = 3.25^2,    x = 1.25 + 1.75/4 = 1.6875
  //   Delta = -21:  m = -9.625,  v = 10.5625 + 441 = 451.5625 = 21.25^2, x = 1.6875 - 9.625/22 = 1.25
  ServerOptimizer opt(config(ServerOptimizerKind::Adagrad, 1.0, 0.5, 0.99, 0.75), 1);
  float x = 1.0f;
  EXPECT_FLOAT_EQ(stepBy(opt, x, 1.0), 1.25f);
  EXPECT_FLOAT_EQ(stepBy(opt, x, 3.0), 1.6875f);
  EXPECT_FLOAT_EQ(stepBy(opt, x, -21.0), 1.25f);
}

TEST(ServerOptimizer, Adam) {
  // beta1 = beta2 = 0.5, tau = 3 (v starts at 9), eta = 2, x = 0:
  //   Delta = 3:    m = 1.5,     v = 4.5 + 4.5 = 9 = 3^2,         x = 2*1.5/(3+3) = 0.5
  //   Delta = 21:   m = 11.25,   v = 4.5 + 220.5 = 225 = 15^2,    x = 0.5 + 2*11.25/18 = 1.75
  //   Delta = -15:  m = -1.875,  v = 112.5 + 112.5 = 225,         x = 1.75 - 2*1.875/18 = 37/24
  ServerOptimizer opt(config(ServerOptimizerKind::Adam, 2.0, 0.5, 0.5, 3.0), 1);
  float x = 0.0f;
  EXPECT_FLOAT_EQ(stepBy(opt, x, 3.0), 0.5f);
  EXPECT_FLOAT_EQ(stepBy(opt, x, 21.0), 1.75f);
  EXPECT_FLOAT_EQ(stepBy(opt, x, -15.0), static_cast<float>(37.0 / 24.0));
}

TEST(ServerOptimizer, YogiMovesTheSecondMomentBothWays) {
  // beta1 = beta2 = 0.5, tau = 3 (v starts at 9), eta = 2, x = 0; v <- v - 0.5 Delta^2 sign(v - Delta^2):
  //   Delta = 3:   v - 9 = 0: v stays 9,         m = 1.5,     x = 2*1.5/6 = 0.5
  //   Delta = 12:  v < 144: v = 9 + 72 = 81,     m = 6.75,    x = 0.5 + 2*6.75/12 = 1.625
  //   Delta = -8:  v > 64:  v = 81 - 32 = 49,    m = -0.625,  x = 1.625 - 2*0.625/10 = 1.5
  ServerOptimizer opt(config(ServerOptimizerKind::Yogi, 2.0, 0.5, 0.5, 3.0), 1);
  float x = 0.0f;
  EXPECT_FLOAT_EQ(stepBy(opt, x, 3.0), 0.5f);
  EXPECT_FLOAT_EQ(stepBy(opt, x, 12.0), 1.625f);
  EXPECT_FLOAT_EQ(stepBy(opt, x, -8.0), 1.5f);
}

TEST(ServerOptimizer, OnlyTheSteppedParametersAndTheirStateChange) {
  // Parameter 1 is stepped twice, parameter 0 once in between: each keeps its own moments.
  ServerOptimizer opt(config(ServerOptimizerKind::Adam, 2.0, 0.5, 0.5, 3.0), 2);
  std::vector<float> x{0.0f, 0.0f};
  const double first = 3.0;
  opt.step(1, 1, &first, x.data() + 1);
  EXPECT_EQ(x[0], 0.0f);
  EXPECT_FLOAT_EQ(x[1], 0.5f);
  const double second = 3.0;
  opt.step(0, 1, &second, x.data());
  EXPECT_FLOAT_EQ(x[0], 0.5f);  // a first step, as parameter 1's was
  const double third = 0.5 + 21.0;
  opt.step(1, 1, &third, x.data() + 1);
  EXPECT_FLOAT_EQ(x[1], 1.75f);  // the second step of the Adam example
}

TEST(ServerOptimizer, StateRoundTripContinuesTheSameSteps) {
  const ServerOptimizerConfig c = config(ServerOptimizerKind::Yogi, 2.0, 0.5, 0.5, 3.0);
  ServerOptimizer a(c, 1);
  EXPECT_TRUE(a.state().empty());  // nothing allocated before the first step
  float x = 0.0f;
  stepBy(a, x, 3.0);
  stepBy(a, x, 12.0);
  ServerOptimizer b(c, 1);
  b.setState(a.state());
  EXPECT_EQ(b.state(), a.state());
  float y = x;
  EXPECT_FLOAT_EQ(stepBy(b, y, -8.0), 1.5f);
  EXPECT_EQ(stepBy(a, x, -8.0), y);
}

}  // namespace
}  // namespace fedsilo
