// Per-example gradient norms (ghost norms) against the norms of gradients computed one sample at a time.
#include "nn/per_example.hpp"

#include <optional>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "nn/presets.hpp"

namespace fedsilo {
namespace {

template <typename T>
std::unique_ptr<ModelT<T>> mlp(const std::vector<int>& hidden, double dropout, std::optional<LossKind> loss = std::nullopt) {
  ModelConfig cfg;
  cfg.name = ModelPreset::Mlp;
  cfg.hidden = hidden;
  cfg.dropout = dropout;
  cfg.loss = loss;
  auto m = buildModel<T>(cfg, InputSpec{Shape{20, 1, 1}, 6, 0});
  Rng init(3, -1, -1, Purpose::Init);
  m->initialize(init);
  m->reserve(40);
  return m;
}

template <typename T>
void batchData(int batch, std::vector<T>& x, std::vector<std::int32_t>& y) {
  Rng r(4, -1, -1, Purpose::Misc);
  x.resize(20 * batch);
  y.resize(batch);
  for (auto& v : x) v = static_cast<T>(r.normal());
  for (auto& l : y) l = static_cast<std::int32_t>(r.below(6));
}

// ||grad of sample i's loss||^2 from a forward/backward on that sample alone (batch of 1).
template <typename T>
double oneSampleNorm2(ModelT<T>& m, const T* x, std::int32_t y) {
  m.lossAndGradient(x, &y, 1);
  double s = 0.0;
  for (Index k = 0; k < m.numParams(); ++k) s += static_cast<double>(m.grads()[k]) * m.grads()[k];
  return s;
}

template <typename T>
void expectNormsMatchOneSampleGradients(ModelT<T>& m, int batch, double relTol) {
  std::vector<T> x;
  std::vector<std::int32_t> y;
  batchData(batch, x, y);
  PerExampleNormsT<T> pe(m);
  std::vector<double> norms2(batch, -1.0);
  const double loss = pe.compute(x.data(), y.data(), batch, norms2.data());
  EXPECT_NEAR(loss, m.lossAndGradient(x.data(), y.data(), batch), 1e-6 * std::abs(loss));
  for (int i = 0; i < batch; ++i) {
    const double expected = oneSampleNorm2(m, x.data() + 20 * i, y[i]);
    EXPECT_NEAR(norms2[i], expected, relTol * expected) << "sample " << i;
  }
}

TEST(PerExampleNorms, DenseGhostNormEqualsTheOuterProductNorm) {
  // One dense layer's per-sample gradient is dz_i x_i^T plus the bias dz_i.
  MatT<double> x = MatT<double>::Random(5, 3), dz = MatT<double>::Random(4, 3);
  std::vector<double> norms2(3, 0.0);
  addDenseGradNormsSquared<double>(CMapT<double>(x.data(), 5, 3), CMapT<double>(dz.data(), 4, 3), norms2.data());
  for (int i = 0; i < 3; ++i) {
    const MatT<double> g = dz.col(i) * x.col(i).transpose();
    EXPECT_NEAR(norms2[i], g.squaredNorm() + dz.col(i).squaredNorm(), 1e-12);
  }
}

TEST(PerExampleNorms, MlpMatchesGradientsOfSingleSamples) {
  auto md = mlp<double>({16, 12}, 0.0);
  expectNormsMatchOneSampleGradients(*md, 9, 1e-10);
  auto mf = mlp<float>({16, 12}, 0.0);
  expectNormsMatchOneSampleGradients(*mf, 33, 1e-4);  // past one 32-sample kernel tile
  auto logreg = mlp<double>({}, 0.0);
  expectNormsMatchOneSampleGradients(*logreg, 5, 1e-10);
  auto hinge = mlp<double>({8}, 0.0, LossKind::Hinge);
  expectNormsMatchOneSampleGradients(*hinge, 7, 1e-10);
}

TEST(PerExampleNorms, LeavesTheBatchMeanGradientOfTheSameForward) {
  // With dropout the masks differ per batch, so check the identity the norms rely on instead:
  // the gradient the walk leaves in model.grads() is the batch-mean gradient of the same forward.
  auto m = mlp<double>({16}, 0.3);
  std::vector<double> x;
  std::vector<std::int32_t> y;
  batchData(8, x, y);
  PerExampleNormsT<double> pe(*m);
  std::vector<double> norms2(8);
  m->setRandomContext(1, 2, 3);
  pe.compute(x.data(), y.data(), 8, norms2.data());
  const std::vector<double> walked(m->grads(), m->grads() + m->numParams());
  m->setRandomContext(1, 2, 3);
  m->lossAndGradient(x.data(), y.data(), 8);
  for (Index k = 0; k < m->numParams(); ++k) EXPECT_NEAR(walked[k], m->grads()[k], 1e-12);
  for (double n2 : norms2) EXPECT_GT(n2, 0.0);
}

TEST(PerExampleNorms, RefusesModelsWithOtherParameterisedLayers) {
  ModelConfig cfg;
  cfg.name = ModelPreset::CnnMcMahan;
  auto cnn = buildModel<float>(cfg, InputSpec{Shape{1, 28, 28}, 10, 0});
  EXPECT_THROW(PerExampleNorms pe(*cnn), ConfigError);
}

}  // namespace
}  // namespace fedsilo
