// DP-SGD's ghost clipping (Model::lossAndClippedGradient): per-example norms and the clipped sum
// against gradients computed one sample at a time.
#include "nn/per_example.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "nn/conv2d.hpp"
#include "nn/dense.hpp"
#include "nn/dropout.hpp"
#include "nn/pool.hpp"
#include "nn/presets.hpp"

namespace fedsilo {
namespace {

constexpr double kNoClip = std::numeric_limits<double>::max();

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

// The gradient of sample i's loss from a forward/backward on that sample alone (batch of 1).
template <typename T>
std::vector<double> oneSampleGradient(ModelT<T>& m, const T* x, std::int32_t y) {
  m.lossAndGradient(x, &y, 1);
  return std::vector<double>(m.grads(), m.grads() + m.numParams());
}

double norm(const std::vector<double>& g) {
  double s = 0.0;
  for (double v : g) s += v * v;
  return std::sqrt(s);
}

template <typename T>
void expectNormsMatchOneSampleGradients(ModelT<T>& m, int batch, double relTol) {
  std::vector<T> x;
  std::vector<std::int32_t> y;
  batchData(batch, x, y);
  std::vector<double> norms(batch, -1.0);
  const double loss = m.lossAndClippedGradient(x.data(), y.data(), batch, kNoClip, norms.data());
  EXPECT_NEAR(loss, m.lossAndGradient(x.data(), y.data(), batch), 1e-6 * std::abs(loss));
  for (int i = 0; i < batch; ++i) {
    const double expected = norm(oneSampleGradient(m, x.data() + 20 * i, y[i]));
    EXPECT_NEAR(norms[i] * norms[i], expected * expected, relTol * expected * expected) << "sample " << i;
  }
}

// grads() after lossAndClippedGradient = sum_i min(1, C / ||g_i||) g_i, with g_i from single samples
// and C the median of the ||g_i||, so that some samples are clipped and some are not.
void expectClippedSum(ModelT<double>& m, int batch) {
  std::vector<double> x;
  std::vector<std::int32_t> y;
  batchData(batch, x, y);
  std::vector<std::vector<double>> g;
  std::vector<double> norms;
  for (int i = 0; i < batch; ++i) {
    g.push_back(oneSampleGradient(m, x.data() + 20 * i, y[i]));
    norms.push_back(norm(g.back()));
  }
  std::vector<double> sorted = norms;
  std::sort(sorted.begin(), sorted.end());
  const double clip = sorted[sorted.size() / 2];
  ASSERT_LT(sorted.front(), clip);
  ASSERT_GT(sorted.back(), clip);
  std::vector<double> expected(static_cast<std::size_t>(m.numParams()), 0.0);
  for (int i = 0; i < batch; ++i) {
    const double factor = norms[i] > clip ? clip / norms[i] : 1.0;
    for (std::size_t k = 0; k < expected.size(); ++k) expected[k] += factor * g[i][k];
  }
  m.lossAndClippedGradient(x.data(), y.data(), batch, clip);
  for (std::size_t k = 0; k < expected.size(); ++k) EXPECT_NEAR(m.grads()[k], expected[k], 1e-10) << "parameter " << k;
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
  auto unfused = mlp<double>({16, 12}, 0.0);
  unfused->setFusion(false);  // Dense and ReLU as separate layers: the walk reads the stored Dense output
  expectNormsMatchOneSampleGradients(*unfused, 9, 1e-10);
}

TEST(PerExampleNorms, WithoutClippingLeavesTheSumOfTheBatchGradientOfTheSameForward) {
  // With dropout the masks differ per batch, so check the identity the clipping relies on instead:
  // unclipped, the second backward pass gives batch x the batch-mean gradient of the same forward.
  auto m = mlp<double>({16}, 0.3);
  std::vector<double> x;
  std::vector<std::int32_t> y;
  batchData(8, x, y);
  std::vector<double> norms(8);
  m->setRandomContext(1, 2, 3);
  m->lossAndClippedGradient(x.data(), y.data(), 8, kNoClip, norms.data());
  const std::vector<double> walked(m->grads(), m->grads() + m->numParams());
  m->setRandomContext(1, 2, 3);
  m->lossAndGradient(x.data(), y.data(), 8);
  for (Index k = 0; k < m->numParams(); ++k) EXPECT_NEAR(walked[k], 8.0 * m->grads()[k], 1e-12);
  for (double n : norms) EXPECT_GT(n, 0.0);
}

TEST(PerExampleNorms, ClippedSumEqualsTheSumOfClippedSingleSampleGradients) {
  auto m = mlp<double>({16, 12}, 0.0);
  expectClippedSum(*m, 9);
  m->setFusion(false);
  expectClippedSum(*m, 9);
  auto logreg = mlp<double>({}, 0.0);
  expectClippedSum(*logreg, 7);
}

// A layer with a parameter and no per-example norms (LayerT::backwardPerExample's default).
class ScaleLayer : public LayerT<float> {
 public:
  explicit ScaleLayer(int n) : n_(n) {}
  std::string kind() const override { return "scale"; }
  Shape outputShape() const override { return Shape{n_, 1, 1}; }
  std::vector<ParamSpec> paramSpecs() const override { return {{"s", 1, false, 1}}; }
  void bind(float* p, float* g) override {
    s_ = p;
    ds_ = g;
  }
  void forward(const CMapT<float>& x, MapT<float>& y, bool) override { y = x * *s_; }
  void backward(const CMapT<float>& x, const CMapT<float>&, const CMapT<float>& dy, MapT<float>* dx) override {
    *ds_ = x.cwiseProduct(dy).sum();
    if (dx) *dx = dy * *s_;
  }

 private:
  int n_;
  float* s_ = nullptr;
  float* ds_ = nullptr;
};

TEST(PerExampleNorms, RefusesALayerWithParametersAndNoPerExampleNorms) {
  Model m(Shape{4, 1, 1}, 3);
  m.add(std::make_unique<ScaleLayer>(4), "scale");
  m.add(std::make_unique<Dense>(4, 3), "fc");
  m.finalize();
  m.reserve(2);
  std::vector<float> x(8, 0.5f);
  std::vector<std::int32_t> y{1, 2};
  try {
    m.lossAndClippedGradient(x.data(), y.data(), 2, 1.0);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 0 (scale)"), std::string::npos) << e.what();
  }
}

// ---- every layer of the zoo against explicit per-example gradients ---------------------------------

TEST(PerExampleNorms, BothMethodsGiveTheNormOfTheSummedOuterProducts) {
  // G = sum_t d_t a_t^T formed explicitly, against the materialised and the ghost route.
  MatT<double> at = MatT<double>::Random(7, 5), dt = MatT<double>::Random(4, 5);
  MatT<double> g = MatT<double>::Zero(4, 7);
  for (int t = 0; t < 5; ++t) g += dt.col(t) * at.col(t).transpose();
  EXPECT_NEAR(outerSumNormSquared(at, dt, PerExampleMethod::Materialise), g.squaredNorm(), 1e-12);
  EXPECT_NEAR(outerSumNormSquared(at, dt, PerExampleMethod::Ghost), g.squaredNorm(), 1e-12);
}

TEST(PerExampleNorms, TheCostRuleGhostsFewPositionsAndManyChannels) {
  // T (d + p) < d p: the ghost norm. cnn_mcmahan's conv1 (28 x 28 pixels, 1 x 5 x 5 -> 32) and conv2
  // (14 x 14, 32 x 5 x 5 -> 64) materialise; cnn_playerfl's conv3 (7 x 7, 128 x 5 x 5 -> 256) ghosts.
  EXPECT_EQ(perExampleMethod(784, 25, 32), PerExampleMethod::Materialise);
  EXPECT_EQ(perExampleMethod(196, 800, 64), PerExampleMethod::Materialise);
  EXPECT_EQ(perExampleMethod(49, 3200, 256), PerExampleMethod::Ghost);
  EXPECT_EQ(perExampleMethod(1, 10, 10), PerExampleMethod::Ghost);  // Dense
}

// Inputs for `m`: images of standard normals, or token ids below `vocab` (with repeats).
template <typename T>
std::vector<T> inputsFor(const ModelT<T>& m, int batch, int vocab) {
  Rng r(11, -1, -1, Purpose::Misc);
  std::vector<T> x(static_cast<std::size_t>(m.inputSize()) * batch);
  for (auto& v : x) v = vocab > 0 ? static_cast<T>(r.below(vocab)) : static_cast<T>(r.normal());
  return x;
}

std::vector<std::int32_t> labelsFor(int classes, int batch) {
  Rng r(12, -1, -1, Purpose::Misc);
  std::vector<std::int32_t> y(batch);
  for (auto& l : y) l = static_cast<std::int32_t>(r.below(classes));
  return y;
}

// Every sample's gradient of its own loss, from the batch's forward (so dropout keeps the batch's masks):
// the backward pass from dL/dlogits with every column but sample i's zeroed, times the batch size.
std::vector<std::vector<double>> perExampleGradients(ModelT<double>& m, const std::vector<double>& x,
                                                     const std::vector<std::int32_t>& y) {
  const int batch = static_cast<int>(y.size());
  std::vector<std::vector<double>> g;
  for (int i = 0; i < batch; ++i) {
    m.setRandomContext(5, 6, 7);
    CMapT<double> logits = m.forward(x.data(), batch, true);
    MatT<double> dl(m.numClasses(), batch);
    MapT<double> dlMap(dl.data(), dl.rows(), dl.cols());
    m.loss().forwardBackward(logits, y.data(), dlMap);
    for (int j = 0; j < batch; ++j) dl.col(j) *= j == i ? static_cast<double>(batch) : 0.0;
    m.backward(dl.data(), batch, nullptr);
    g.emplace_back(m.grads(), m.grads() + m.numParams());
  }
  return g;
}

// The clipped sum at clip C = the median norm (some samples clipped, some not), in double against the
// explicit sum of clipped per-example gradients to 1e-10 relative, and the float model with the same
// parameters against it to float rounding. Every pass replays the same random context (dropout masks).
void expectClippedSumMatchesExplicitGradients(ModelT<double>& md, ModelT<float>& mf, int batch, int vocab,
                                              bool checkSingleSamples) {
  for (Index k = 0; k < md.numParams(); ++k) md.params()[k] = static_cast<double>(mf.params()[k]);
  const std::vector<float> xf = inputsFor(mf, batch, vocab);
  const std::vector<double> x(xf.begin(), xf.end());
  const std::vector<std::int32_t> y = labelsFor(md.numClasses(), batch);
  const auto g = perExampleGradients(md, x, y);
  std::vector<double> norms;
  for (const auto& gi : g) norms.push_back(norm(gi));
  if (checkSingleSamples) {  // without dropout, a sample's gradient does not depend on its batch
    for (int i = 0; i < batch; ++i)
      EXPECT_NEAR(norm(oneSampleGradient(md, x.data() + md.inputSize() * i, y[i])), norms[i], 1e-9 * norms[i]);
  }
  std::vector<double> sorted = norms;
  std::sort(sorted.begin(), sorted.end());
  const double clip = sorted[sorted.size() / 2];
  ASSERT_LT(sorted.front(), clip);
  ASSERT_GT(sorted.back(), clip);
  std::vector<double> expected(static_cast<std::size_t>(md.numParams()), 0.0);
  for (int i = 0; i < batch; ++i) {
    const double factor = norms[i] > clip ? clip / norms[i] : 1.0;
    for (std::size_t k = 0; k < expected.size(); ++k) expected[k] += factor * g[i][k];
  }
  const double scale = norm(expected);
  ASSERT_GT(scale, 0.0);

  std::vector<double> got(batch);
  md.setRandomContext(5, 6, 7);
  md.lossAndClippedGradient(x.data(), y.data(), batch, clip, got.data());
  for (int i = 0; i < batch; ++i) EXPECT_NEAR(got[i], norms[i], 1e-10 * norms[i]) << "sample " << i;
  double err = 0.0;
  for (std::size_t k = 0; k < expected.size(); ++k) err += std::pow(md.grads()[k] - expected[k], 2);
  EXPECT_LT(std::sqrt(err), 1e-10 * scale);

  mf.setRandomContext(5, 6, 7);
  mf.lossAndClippedGradient(xf.data(), y.data(), batch, clip, got.data());
  for (int i = 0; i < batch; ++i) EXPECT_NEAR(got[i], norms[i], 1e-4 * norms[i]) << "sample " << i;
  err = 0.0;
  double worst = 0.0;
  for (std::size_t k = 0; k < expected.size(); ++k) {
    err += std::pow(mf.grads()[k] - expected[k], 2);
    worst = std::max(worst, std::abs(mf.grads()[k] - expected[k]));
  }
  EXPECT_LT(std::sqrt(err), 1e-4 * scale) << "largest coordinate error " << worst;
}

template <typename T>
std::unique_ptr<ModelT<T>> preset(ModelPreset name, const InputSpec& in, double dropout, int reserve,
                                  int embedDim = 6) {
  ModelConfig cfg;
  cfg.name = name;
  cfg.dropout = dropout;
  cfg.embedDim = embedDim;
  cfg.lstmHidden = 5;
  cfg.lstmLayers = 2;
  auto m = buildModel<T>(cfg, in);
  Rng init(3, -1, -1, Purpose::Init);
  m->initialize(init);
  m->reserve(reserve);
  return m;
}

// `sameAlone`: a sample's gradient does not depend on its batch (no dropout), so the explicit
// per-example gradients are checked against single-sample passes too.
void expectPresetClippedSum(ModelPreset name, const InputSpec& in, double dropout, int batch, int embedDim = 6,
                            bool sameAlone = true) {
  auto md = preset<double>(name, in, dropout, batch, embedDim);
  auto mf = preset<float>(name, in, dropout, batch, embedDim);
  expectClippedSumMatchesExplicitGradients(*md, *mf, batch, in.vocabSize, sameAlone && dropout == 0.0);
}

TEST(PerExampleNorms, CnnMcMahanClippedSumMatchesExplicitGradients) {
  expectPresetClippedSum(ModelPreset::CnnMcMahan, InputSpec{Shape{1, 8, 8}, 4, 0}, 0.0, 6);
  expectPresetClippedSum(ModelPreset::CnnMcMahan, InputSpec{Shape{3, 8, 12}, 3, 0}, 0.4, 7);
}

TEST(PerExampleNorms, CnnPlayerFlClippedSumMatchesExplicitGradients) {
  // conv3 at 2 x 2 pixels takes the ghost norm, conv1 and conv2 materialise.
  expectPresetClippedSum(ModelPreset::CnnPlayerFl, InputSpec{Shape{1, 8, 8}, 3, 0}, 0.0, 5);
  expectPresetClippedSum(ModelPreset::CnnPlayerFl, InputSpec{Shape{1, 8, 8}, 3, 0}, 0.3, 5);
}

TEST(PerExampleNorms, LstmAndEmbeddingClippedSumMatchesExplicitGradients) {
  // vocabulary 5 over 7 steps: every sequence repeats tokens, so embedding rows accumulate.
  expectPresetClippedSum(ModelPreset::Lstm, InputSpec{Shape{7, 1, 1}, 3, 5}, 0.0, 6);
  expectPresetClippedSum(ModelPreset::Lstm, InputSpec{Shape{7, 1, 1}, 3, 5}, 0.3, 6);
}

TEST(PerExampleNorms, CnnPlayerFlCifarWithGlobalAveragePoolClippedSumMatchesExplicitGradients) {
  // Five padded convolutions (4 x 4 input: 6, 8, 6, 8, 6 pixels; the late ones ghost), max-pools, the
  // preset's own dropout after every block, then the global average pool before the dense head.
  expectPresetClippedSum(ModelPreset::CnnPlayerFlCifar, InputSpec{Shape{3, 4, 4}, 3, 0}, 0.0, 5, 6, false);
}

TEST(PerExampleNorms, TransformerClippedSumMatchesExplicitGradients) {
  // Token and position embedding, self-attention, feed-forward, first token, dense head. Vocabulary 5
  // (token 0 is padding, which attention masks) with repeated tokens. 7 tokens of width 6: attention and
  // feed-forward materialise; 2 tokens of width 8: both take the ghost norm.
  EXPECT_EQ(perExampleMethod(7, 6, 18), PerExampleMethod::Materialise);
  EXPECT_EQ(perExampleMethod(7, 6, 24), PerExampleMethod::Materialise);
  EXPECT_EQ(perExampleMethod(2, 8, 24), PerExampleMethod::Ghost);
  EXPECT_EQ(perExampleMethod(2, 8, 8), PerExampleMethod::Ghost);
  EXPECT_EQ(perExampleMethod(2, 32, 8), PerExampleMethod::Ghost);
  expectPresetClippedSum(ModelPreset::TransformerPlayerFl, InputSpec{Shape{7, 1, 1}, 3, 5}, 0.0, 6, 6);
  expectPresetClippedSum(ModelPreset::TransformerPlayerFl, InputSpec{Shape{2, 1, 1}, 3, 5}, 0.0, 7, 8);
}

// Strided and padded convolutions, one taking each route, with pooling, dropout and flatten between.
template <typename T>
std::unique_ptr<ModelT<T>> mixedConvModel() {
  auto m = std::make_unique<ModelT<T>>(Shape{2, 9, 9}, 3);
  auto c1 = std::make_unique<Conv2DT<T>>(2, 9, 9, 4, 3, 2, 1);  // 5 x 5 pixels, 18 -> 4: materialise
  EXPECT_EQ(c1->perExampleNormMethod(), PerExampleMethod::Materialise);
  m->add(std::move(c1), "conv1");
  m->add(std::make_unique<ReluT<T>>(Shape{4, 5, 5}));
  m->add(std::make_unique<MaxPool2DT<T>>(4, 5, 5, 2, 2));
  auto c2 = std::make_unique<Conv2DT<T>>(4, 2, 2, 24, 3, 1, 1);  // 2 x 2 pixels, 36 -> 24: ghost
  EXPECT_EQ(c2->perExampleNormMethod(), PerExampleMethod::Ghost);
  m->add(std::move(c2), "conv2");
  m->add(std::make_unique<ReluT<T>>(Shape{24, 2, 2}));
  m->add(std::make_unique<DropoutT<T>>(Shape{24, 2, 2}, 0.25));
  m->add(std::make_unique<FlattenT<T>>(Shape{24, 2, 2}));
  m->add(std::make_unique<DenseT<T>>(96, 3), "fc");
  m->finalize();
  Rng init(3, -1, -1, Purpose::Init);
  m->initialize(init);
  m->reserve(8);
  return m;
}

TEST(PerExampleNorms, StridedPaddedConvolutionsByBothRoutesMatchExplicitGradients) {
  auto md = mixedConvModel<double>();
  auto mf = mixedConvModel<float>();
  expectClippedSumMatchesExplicitGradients(*md, *mf, 8, 0, false);
  md->setFusion(false);
  mf->setFusion(false);
  expectClippedSumMatchesExplicitGradients(*md, *mf, 8, 0, false);
}

}  // namespace
}  // namespace fedsilo
