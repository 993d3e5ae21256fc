// Loss functions: hand-computed values, finite-difference gradients, factory.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "grad_check.hpp"
#include "nn/focal_playerfl_loss.hpp"
#include "nn/loss.hpp"

namespace fedsilo::test {
namespace {

// Mean loss and its gradient for logits given column by column.
struct LossEval {
  double loss;
  std::vector<double> grad;
};

LossEval evalLoss(LossT<double>& loss, const std::vector<double>& logits, int classes,
                  const std::vector<std::int32_t>& labels) {
  const int batch = static_cast<int>(labels.size());
  LossEval r{0.0, std::vector<double>(logits.size(), std::nan(""))};
  CMapT<double> z(logits.data(), classes, batch);
  MapT<double> g(r.grad.data(), classes, batch);
  r.loss = loss.forwardBackward(z, labels.data(), g);
  return r;
}

// Central-difference check of dL/dlogits, plus lossSum / B == forwardBackward's mean.
void checkLossGradient(LossT<double>& loss, std::vector<double> logits, int classes,
                       const std::vector<std::int32_t>& labels) {
  const int batch = static_cast<int>(labels.size());
  const LossEval a = evalLoss(loss, logits, classes, labels);
  auto meanLoss = [&]() { return loss.lossSum(CMapT<double>(logits.data(), classes, batch), labels.data()) / batch; };
  EXPECT_NEAR(a.loss, meanLoss(), 1e-14);
  const double eps = 1e-6;
  double worst = 0.0;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const double saved = logits[i];
    logits[i] = saved + eps;
    const double lp = meanLoss();
    logits[i] = saved - eps;
    const double lm = meanLoss();
    logits[i] = saved;
    worst = std::max(worst, gradErr(a.grad[i], (lp - lm) / (2 * eps), 1e-2));
  }
  EXPECT_LT(worst, 1e-6) << loss.kind();
}

TEST(Loss, CrossEntropyHandValue) {
  SoftmaxCrossEntropyT<double> ce;
  // log(e^1 + e^2 + e^3) - 3; gradient softmax - onehot.
  const auto r = evalLoss(ce, {1, 2, 3}, 3, {2});
  EXPECT_NEAR(r.loss, std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0, 1e-14);
  EXPECT_NEAR(r.loss, 0.40760596444438, 1e-12);
  EXPECT_NEAR(r.grad[0], 0.09003057317038, 1e-12);
  EXPECT_NEAR(r.grad[1], 0.24472847105480, 1e-12);
  EXPECT_NEAR(r.grad[2], 0.66524095577482 - 1.0, 1e-12);
}

TEST(Loss, HingeHandValue) {
  MulticlassHingeT<double> hinge;
  // Sample 0: label 0, scores (1, 2, 0.5): margins 1-1+2 = 2 and 1-1+0.5 = 0.5 -> (2 + 0.5) / 3.
  // Sample 1: label 0, scores (3, 0, 1): margins -2 and -1 -> 0. Batch mean = 2.5 / 3 / 2.
  const auto r = evalLoss(hinge, {1, 2, 0.5, 3, 0, 1}, 3, {0, 0});
  EXPECT_NEAR(r.loss, 2.5 / 3.0 / 2.0, 1e-15);
  const double s = 1.0 / 3.0 / 2.0;  // per violating class: 1 / (C * B)
  EXPECT_NEAR(r.grad[0], -2 * s, 1e-15);
  EXPECT_NEAR(r.grad[1], s, 1e-15);
  EXPECT_NEAR(r.grad[2], s, 1e-15);
  for (int i = 3; i < 6; ++i) EXPECT_EQ(r.grad[i], 0.0);
  // A margin of exactly 0 contributes neither loss nor (sub)gradient.
  const auto edge = evalLoss(hinge, {2, 1}, 2, {0});
  EXPECT_EQ(edge.loss, 0.0);
  EXPECT_EQ(edge.grad[0], 0.0);
  EXPECT_EQ(edge.grad[1], 0.0);
}

TEST(Loss, FocalHandValue) {
  FocalLossT<double> focal(2.0);
  // logits (0, ln 3): p = (1/4, 3/4), label 1: l = -(1/4)^2 ln(3/4).
  const auto r = evalLoss(focal, {0.0, std::log(3.0)}, 2, {1});
  EXPECT_NEAR(r.loss, -0.0625 * std::log(0.75), 1e-15);
  EXPECT_NEAR(r.loss, 0.0179801295, 1e-10);
  // dl/dz = G (e_y - p), G = 2 * q * p_y * ln p_y - q^2 with q = 1/4, p_y = 3/4.
  const double G = 2 * 0.25 * 0.75 * std::log(0.75) - 0.0625;
  EXPECT_NEAR(r.grad[0], -G * 0.25, 1e-15);
  EXPECT_NEAR(r.grad[1], G * 0.25, 1e-15);
}

TEST(Loss, FocalGammaZeroIsCrossEntropy) {
  FocalLossT<double> focal(0.0);
  SoftmaxCrossEntropyT<double> ce;
  const std::vector<double> z = randomVector(12, 4, -3, 3);
  const auto a = evalLoss(focal, z, 4, {0, 3, 1});
  const auto b = evalLoss(ce, z, 4, {0, 3, 1});
  EXPECT_NEAR(a.loss, b.loss, 1e-14);
  for (std::size_t i = 0; i < z.size(); ++i) EXPECT_NEAR(a.grad[i], b.grad[i], 1e-14);
}

TEST(Loss, GradientsMatchFiniteDifferences) {
  const std::vector<double> z = randomVector(20, 9, -2, 2);
  const std::vector<std::int32_t> y = {0, 4, 2, 2};
  SoftmaxCrossEntropyT<double> ce;
  checkLossGradient(ce, z, 5, y);
  MulticlassHingeT<double> hinge;
  checkLossGradient(hinge, z, 5, y);
  for (double gamma : {0.5, 1.0, 2.0, 3.5}) {
    SCOPED_TRACE(gamma);
    FocalLossT<double> focal(gamma);
    checkLossGradient(focal, z, 5, y);
  }
}

TEST(Loss, FocalAlphaWeighsEachSampleByItsClass) {
  // Per sample, alpha_y scales loss and gradient: the batch of labels {0, 4, 2, 2} with alpha
  // (0.25, 1, 3, 1, 0.5) equals the unweighted per-sample terms times 0.25, 0.5, 3, 3.
  const std::vector<double> z = randomVector(20, 9, -2, 2);
  const std::vector<std::int32_t> y = {0, 4, 2, 2};
  const std::vector<double> alpha = {0.25, 1.0, 3.0, 1.0, 0.5}, perSample = {0.25, 0.5, 3.0, 3.0};
  FocalLossT<double> plain(2.0), weighted(2.0, alpha);
  const auto a = evalLoss(plain, z, 5, y);
  const auto b = evalLoss(weighted, z, 5, y);
  double expected = 0.0;
  for (int j = 0; j < 4; ++j) {
    const std::vector<double> col(z.begin() + 5 * j, z.begin() + 5 * j + 5);
    expected += perSample[j] * evalLoss(plain, col, 5, {y[j]}).loss / 4.0;
    for (int k = 0; k < 5; ++k) EXPECT_NEAR(b.grad[5 * j + k], perSample[j] * a.grad[5 * j + k], 1e-15);
  }
  EXPECT_NEAR(b.loss, expected, 1e-14);
  EXPECT_NE(b.loss, a.loss);
  for (double gamma : {0.0, 2.0, 3.0}) {
    SCOPED_TRACE(gamma);
    FocalLossT<double> focal(gamma, alpha);
    checkLossGradient(focal, z, 5, y);
  }
}

TEST(Loss, FocalAlphaMustBeFiniteAndNonNegative) {
  EXPECT_THROW(FocalLossT<double>(2.0, {1.0, -0.5}), ConfigError);
  EXPECT_THROW(FocalLossT<double>(2.0, {1.0, std::nan("")}), ConfigError);
  EXPECT_THROW(makeLoss<double>(LossKind::Focal, 2.0, {std::numeric_limits<double>::infinity(), 1.0}), ConfigError);
  auto l = makeLoss<double>(LossKind::Focal, 2.0, {0.5, 2.0});
  EXPECT_EQ(dynamic_cast<FocalLossT<double>&>(*l).alpha(), (std::vector<double>{0.5, 2.0}));
}

// The PLayer-FL authors' form by hand: logits (0, ln 2, 0) give p = (1/4, 1/2, 1/4); label 1, gamma 2,
// alpha (0.2, 0.6, 0.9): (10 / 3) ln 2 [0.6 (1/2)^2 + (1 - 0.2)(1/4)^2 + (1 - 0.9)(1/4)^2].
TEST(Loss, FocalPlayerFlHandValue) {
  FocalPlayerFlLossT<double> focal(2.0, {0.2, 0.6, 0.9});
  const auto r = evalLoss(focal, {0.0, std::log(2.0), 0.0}, 3, {1});
  EXPECT_NEAR(r.loss, 10.0 / 3.0 * std::log(2.0) * (0.6 * 0.25 + 0.8 * 0.0625 + 0.1 * 0.0625), 1e-14);
  // alpha all 1 (the default) leaves only the label's term: (10 / C) (1 - p_y)^gamma (-log p_y), i.e. the
  // standard focal loss times 10 / C.
  FocalPlayerFlLossT<double> plain(2.0);
  FocalLossT<double> standard(2.0);
  const std::vector<double> z = randomVector(20, 9, -2, 2);
  const std::vector<std::int32_t> y = {0, 4, 2, 2};
  EXPECT_NEAR(evalLoss(plain, z, 5, y).loss, 2.0 * evalLoss(standard, z, 5, y).loss, 1e-13);
}

TEST(Loss, FocalPlayerFlGradientsMatchFiniteDifferences) {
  const std::vector<double> z = randomVector(20, 9, -2, 2);
  const std::vector<std::int32_t> y = {0, 4, 2, 2};
  for (double gamma : {0.0, 0.5, 1.0, 3.0}) {
    SCOPED_TRACE(gamma);
    FocalPlayerFlLossT<double> focal(gamma, {0.13, 0.18, 0.22, 0.22, 0.24});
    checkLossGradient(focal, z, 5, y);
  }
  EXPECT_THROW(FocalPlayerFlLossT<double>(2.0, {0.5, 1.5}), ConfigError);
  EXPECT_THROW(FocalPlayerFlLossT<double>(-1.0), ConfigError);
  EXPECT_EQ(makeLoss<double>("focal_playerfl", 3.0)->kind(), "focal_playerfl");
}

TEST(Loss, FocalConfidentPredictionKeepsFiniteGradient) {
  // p_y ~ 1 - 2e-9: 1 - p_y must not cancel to 0 (which would give a 0 loss and, for gamma < 1,
  // a 0 * inf gradient).
  for (double gamma : {0.5, 2.0}) {
    FocalLossT<double> focal(gamma);
    const auto r = evalLoss(focal, {20.0, 0.0, 0.0}, 3, {0});
    EXPECT_GT(r.loss, 0.0);
    for (double g : r.grad) EXPECT_TRUE(std::isfinite(g));
    EXPECT_LT(r.grad[0], 0.0);
  }
}

TEST(Loss, FloatMatchesDouble) {
  const std::vector<double> zd = randomVector(30, 12, -4, 4);
  std::vector<float> zf(zd.begin(), zd.end());
  const std::vector<std::int32_t> y = {1, 0, 2, 2, 1, 0};
  for (const std::string name : {"cross_entropy", "hinge", "focal"}) {
    SCOPED_TRACE(name);
    auto lf = makeLoss<float>(name, 2.0);
    auto ld = makeLoss<double>(name, 2.0);
    std::vector<float> gf(zf.size());
    std::vector<double> gd(zd.size());
    MapT<float> gfm(gf.data(), 5, 6);
    MapT<double> gdm(gd.data(), 5, 6);
    const double a = lf->forwardBackward(CMapT<float>(zf.data(), 5, 6), y.data(), gfm);
    const double b = ld->forwardBackward(CMapT<double>(zd.data(), 5, 6), y.data(), gdm);
    EXPECT_NEAR(a, b, 1e-5);
    for (std::size_t i = 0; i < gd.size(); ++i) EXPECT_NEAR(gf[i], gd[i], 1e-6);
  }
}

TEST(Loss, Factory) {
  EXPECT_EQ(makeLoss<float>("cross_entropy")->kind(), "cross_entropy");
  EXPECT_EQ(makeLoss<double>("hinge")->kind(), "hinge");
  auto focal = makeLoss<double>("focal", 1.5);
  ASSERT_EQ(focal->kind(), "focal");
  EXPECT_EQ(dynamic_cast<FocalLossT<double>&>(*focal).gamma(), 1.5);
  EXPECT_THROW(makeLoss<float>("mse"), ConfigError);
  EXPECT_THROW(makeLoss<float>("focal", -1.0), ConfigError);
  EXPECT_EQ(lossNames(), (std::vector<std::string>{"cross_entropy", "hinge", "focal", "focal_playerfl"}));
  for (const auto& n : lossNames()) EXPECT_NO_THROW(makeLoss<float>(n, 2.0));
}

TEST(Loss, BadLabelIsReported) {
  for (const auto& n : lossNames()) {
    auto l = makeLoss<double>(n, 2.0);
    std::vector<double> z = {0.1, 0.2, 0.3}, g(3);
    MapT<double> gm(g.data(), 3, 1);
    const std::int32_t bad = 3;
    EXPECT_THROW(l->forwardBackward(CMapT<double>(z.data(), 3, 1), &bad, gm), Error) << n;
    EXPECT_THROW(l->lossSum(CMapT<double>(z.data(), 3, 1), &bad), Error) << n;
  }
}

}  // namespace
}  // namespace fedsilo::test
