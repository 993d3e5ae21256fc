// The client optimizer with train.optimizer = sgd (optim/optimizer.hpp) against torch.optim.SGD's
// update rule (dampening 0, no Nesterov), worked by hand:
//   g <- g + wd * p;   v <- g on the first step, else v <- mu * v + g;   p <- p - lr * v.
// The expected values below are the arithmetic of that rule written out, not the optimiser's output.
// (tests/optim/optimizer_test.cpp covers Nesterov, Adam, AdamW and the per-tensor step counts.)
#include <gtest/gtest.h>

#include <vector>

#include "core/config.hpp"
#include "optim/optimizer.hpp"

namespace fedsilo {
namespace {

// float arithmetic of a handful of operations on values of order 1: a few ulps (float eps is 1.2e-7).
constexpr float kTol = 2e-6f;

// One parameter tensor stepped by Optimizer with OptimizerKind::Sgd; the state (the momentum buffer)
// is held here as the trainer holds it, so that it carries over steps and learning-rate changes.
class Sgd {
 public:
  Sgd(double lr, double momentum, double weightDecay) {
    s_.optimizer = OptimizerKind::Sgd;
    s_.lr = lr;
    s_.momentum = momentum;
    s_.weightDecay = weightDecay;
  }
  explicit Sgd(const TrainConfig& t) : s_(t) {}
  void step(float* p, const float* g, std::size_t n) {
    const Optimizer optimizer(s_);
    optimizer.prepare(state_, n, 1);
    optimizer.step(p, g, {ParamSegment{0, n, 0}}, state_);
  }
  const std::vector<float>& velocity() const { return state_.first; }
  void reset() { state_.clear(); }  // a fresh torch.optim.SGD: the next step is a first step
  void setLr(double lr) { s_.lr = lr; }
  double lr() const { return s_.lr; }

 private:
  OptimizerSettings s_;
  OptimizerState state_;
};

void expectValues(const std::vector<float>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], kTol) << what << "[" << i << "]";
}

TEST(Sgd, PlainStepIsLearningRateTimesGradient) {
  Sgd sgd(0.1, 0.0, 0.0);
  std::vector<float> p{1.0f, -2.0f, 0.5f};
  const std::vector<float> g{0.5f, 0.25f, -1.0f};
  sgd.step(p.data(), g.data(), p.size());
  // 1 - 0.1*0.5, -2 - 0.1*0.25, 0.5 + 0.1*1
  expectValues(p, {0.95, -2.025, 0.6}, "p");
  EXPECT_TRUE(sgd.velocity().empty()) << "no momentum buffer without momentum";
}

TEST(Sgd, WeightDecayAddsDecayTimesParameterToTheGradient) {
  Sgd sgd(0.1, 0.0, 0.01);
  std::vector<float> p{1.0f, -2.0f};
  const std::vector<float> g{0.5f, 0.25f};
  sgd.step(p.data(), g.data(), p.size());
  // g' = (0.5 + 0.01*1, 0.25 + 0.01*(-2)) = (0.51, 0.23); p = (1 - 0.051, -2 - 0.023)
  expectValues(p, {0.949, -2.023}, "p");
  sgd.step(p.data(), g.data(), p.size());
  // g' = (0.5 + 0.00949, 0.25 - 0.02023) = (0.50949, 0.22977); p = (0.949 - 0.050949, -2.023 - 0.022977)
  expectValues(p, {0.898051, -2.045977}, "p");
}

TEST(Sgd, MomentumWithWeightDecayOverTwoSteps) {
  Sgd sgd(0.1, 0.9, 0.01);
  std::vector<float> p{1.0f, -2.0f};
  sgd.step(p.data(), std::vector<float>{0.5f, 0.25f}.data(), p.size());
  // Step 1: g' = (0.51, 0.23); v = g' (PyTorch starts the buffer at the first gradient);
  //         p = (1 - 0.051, -2 - 0.023).
  expectValues(sgd.velocity(), {0.51, 0.23}, "v after step 1");
  expectValues(p, {0.949, -2.023}, "p after step 1");
  sgd.step(p.data(), std::vector<float>{-1.0f, 0.5f}.data(), p.size());
  // Step 2: g' = (-1 + 0.00949, 0.5 - 0.02023) = (-0.99051, 0.47977);
  //         v = 0.9 * (0.51, 0.23) + g' = (0.459 - 0.99051, 0.207 + 0.47977) = (-0.53151, 0.68677);
  //         p = (0.949 + 0.053151, -2.023 - 0.068677).
  expectValues(sgd.velocity(), {-0.53151, 0.68677}, "v after step 2");
  expectValues(p, {1.002151, -2.091677}, "p after step 2");
}

TEST(Sgd, MomentumStepsAccumulateTheVelocity) {
  // A constant gradient 1, lr 1, mu 0.5: v = 1, 1.5, 1.75; p = -1, -2.5, -4.25.
  Sgd sgd(1.0, 0.5, 0.0);
  std::vector<float> p{0.0f};
  const std::vector<float> g{1.0f};
  const double v[] = {1.0, 1.5, 1.75}, expectP[] = {-1.0, -2.5, -4.25};
  for (int t = 0; t < 3; ++t) {
    sgd.step(p.data(), g.data(), 1);
    EXPECT_NEAR(sgd.velocity()[0], v[t], kTol) << "step " << t;
    EXPECT_NEAR(p[0], expectP[t], kTol) << "step " << t;
  }
}

TEST(Sgd, ResetStartsANewRunFromZeroVelocity) {
  // After reset() the next step is a first step again: v = g' (a fresh torch.optim.SGD).
  Sgd sgd(0.1, 0.9, 0.0);
  std::vector<float> p{1.0f};
  const std::vector<float> g{2.0f};
  sgd.step(p.data(), g.data(), 1);
  sgd.step(p.data(), g.data(), 1);
  EXPECT_NEAR(sgd.velocity()[0], 0.9 * 2.0 + 2.0, kTol);
  sgd.reset();
  std::vector<float> q{1.0f};
  sgd.step(q.data(), g.data(), 1);
  EXPECT_NEAR(sgd.velocity()[0], 2.0, kTol);
  EXPECT_NEAR(q[0], 1.0 - 0.1 * 2.0, kTol);
}

TEST(Sgd, ChangingTheLearningRateKeepsTheVelocity) {
  // As changing param_groups[0]["lr"] between torch steps: the buffer carries over, only lr changes.
  Sgd sgd(0.1, 0.5, 0.0);
  std::vector<float> p{0.0f};
  const std::vector<float> g{1.0f};
  sgd.step(p.data(), g.data(), 1);  // v = 1, p = -0.1
  sgd.setLr(0.01);
  EXPECT_EQ(sgd.lr(), 0.01);
  sgd.step(p.data(), g.data(), 1);  // v = 0.5 + 1 = 1.5, p = -0.1 - 0.015
  EXPECT_NEAR(sgd.velocity()[0], 1.5, kTol);
  EXPECT_NEAR(p[0], -0.115, kTol);
}

TEST(Sgd, TrainConfigSuppliesLearningRateMomentumAndDecay) {
  TrainConfig t;
  t.lr = 0.1;
  t.momentum = 0.9;
  t.weightDecay = 0.01;
  Sgd fromConfig(t), explicitArgs(0.1, 0.9, 0.01);
  std::vector<float> p{1.0f, -2.0f}, q = p;
  const std::vector<float> g{0.5f, 0.25f};
  for (int step = 0; step < 2; ++step) {
    fromConfig.step(p.data(), g.data(), p.size());
    explicitArgs.step(q.data(), g.data(), q.size());
  }
  EXPECT_EQ(p, q);
  // and it is the momentum rule, not plain SGD: step 2 moved by lr * (mu * g1' + g2').
  expectValues(p, {1.0 - 0.051 - 0.1 * (0.9 * 0.51 + 0.50949), -2.0 - 0.023 - 0.1 * (0.9 * 0.23 + 0.22977)}, "p");
}

}  // namespace
}  // namespace fedsilo
