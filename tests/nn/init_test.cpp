// Initialisation schemes (model.init_scheme, model.init_bias): PyTorch's formulas checked by the
// statistics of large tensors, zero biases, and the default scheme unchanged bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "nn/conv2d.hpp"
#include "nn/dense.hpp"
#include "nn/presets.hpp"

namespace fedsilo::test {
namespace {

struct Moments {
  double mean = 0, sd = 0, maxAbs = 0;
};

Moments momentsOf(const float* v, Index n) {
  Moments m;
  for (Index i = 0; i < n; ++i) m.mean += v[i];
  m.mean /= static_cast<double>(n);
  for (Index i = 0; i < n; ++i) {
    m.sd += (v[i] - m.mean) * (v[i] - m.mean);
    m.maxAbs = std::max(m.maxAbs, static_cast<double>(std::fabs(v[i])));
  }
  m.sd = std::sqrt(m.sd / static_cast<double>(n));
  return m;
}

// A dense 400 -> 300 layer's weights and biases under `options`.
std::vector<float> denseParams(const InitOptions& options, std::uint64_t seed = 1) {
  DenseT<float> d(400, 300);
  std::vector<float> p(400 * 300 + 300);
  Rng rng(seed, -1, -1, Purpose::Init);
  initializeLayer(d, p.data(), rng, options);
  return p;
}

TEST(Init, KaimingNormalHasStdSqrtTwoOverFanIn) {
  const std::vector<float> p = denseParams({InitScheme::KaimingNormal, BiasInit::Zero});
  const Moments w = momentsOf(p.data(), 400 * 300);
  EXPECT_NEAR(w.mean, 0.0, 0.002);
  EXPECT_NEAR(w.sd, std::sqrt(2.0 / 400.0), 0.01 * std::sqrt(2.0 / 400.0));
  for (std::size_t i = 400 * 300; i < p.size(); ++i) EXPECT_EQ(p[i], 0.0f);
}

TEST(Init, UniformSchemesHaveTheirBounds) {
  // U(-b, b): the largest |w| of 120,000 draws is within 0.1% of b, and sd = b / sqrt(3).
  const double kaiming = std::sqrt(6.0 / 400.0), xavier = std::sqrt(6.0 / (400.0 + 300.0));
  const double pytorch = 1.0 / std::sqrt(400.0);
  const std::pair<InitScheme, double> cases[] = {
      {InitScheme::KaimingUniform, kaiming},
      {InitScheme::XavierUniform, xavier},
      {InitScheme::PytorchDefault, pytorch}};
  for (const auto& [scheme, bound] : cases) {
    const std::vector<float> p = denseParams({scheme, BiasInit::Default});
    const Moments w = momentsOf(p.data(), 400 * 300);
    EXPECT_LE(w.maxAbs, bound * (1 + 1e-6)) << nameOf(scheme);
    EXPECT_GT(w.maxAbs, bound * 0.999) << nameOf(scheme);
    EXPECT_NEAR(w.sd, bound / std::sqrt(3.0), 0.01 * bound) << nameOf(scheme);
    // Default biases: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), whatever the weights' scheme.
    const Moments b = momentsOf(p.data() + 400 * 300, 300);
    EXPECT_LE(b.maxAbs, pytorch * (1 + 1e-6));
    EXPECT_GT(b.maxAbs, pytorch * 0.9);
  }
}

TEST(Init, ConvFansCountTheKernel) {
  // conv 8 -> 16 channels, 5x5: fan_in = 200, fan_out = 400.
  Conv2DT<float> conv(8, 12, 12, 16, 5, 1, 2);
  std::vector<float> p(16 * 200 + 16);
  Rng rng(2, -1, -1, Purpose::Init);
  initializeLayer(conv, p.data(), rng, {InitScheme::XavierUniform, BiasInit::Zero});
  const Moments w = momentsOf(p.data(), 16 * 200);
  const double bound = std::sqrt(6.0 / 600.0);
  EXPECT_LE(w.maxAbs, bound * (1 + 1e-6));
  EXPECT_GT(w.maxAbs, bound * 0.99);
  EXPECT_EQ(*std::max_element(p.begin() + 16 * 200, p.end()), 0.0f);
  Rng rng2(2, -1, -1, Purpose::Init);
  initializeLayer(conv, p.data(), rng2, {InitScheme::KaimingNormal, BiasInit::Zero});
  EXPECT_NEAR(momentsOf(p.data(), 16 * 200).sd, std::sqrt(2.0 / 200.0), 0.05 * std::sqrt(2.0 / 200.0));
}

// pytorch_default with default biases is the layers' own initParams, draw for draw.
TEST(Init, DefaultSchemeIsTheLayersOwnInitialisation) {
  for (const char* name : {"mlp", "cnn_playerfl", "lstm"}) {
    ModelConfig cfg;
    cfg.name = parseEnum<ModelPreset>("model", name);
    const bool tokens = cfg.name == ModelPreset::Lstm;
    const InputSpec in = tokens ? InputSpec{Shape{1, 1, 12}, 5, 40} : InputSpec{Shape{1, 28, 28}, 10, 0};
    auto m = buildModel<float>(cfg, in);
    Rng a(7, -1, -1, Purpose::Init), b(7, -1, -1, Purpose::Init);
    m->initialize(a);
    std::vector<float> expected(static_cast<std::size_t>(m->numParams()));
    Index offset = 0;
    for (std::size_t i = 0; i < m->numLayers(); ++i) {
      Index size = 0;
      for (const auto& s : m->layer(i).paramSpecs()) size += s.size;
      if (size == 0) continue;
      m->layer(i).initParams(b, expected.data() + offset);
      offset += size;
    }
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), m->params())) << name;
  }
}

TEST(Init, ZeroBiasesEverywhereSchemeOnDenseAndConvOnly) {
  ModelConfig cfg;
  cfg.name = ModelPreset::Lstm;
  cfg.initScheme = InitScheme::KaimingNormal;
  cfg.initBias = BiasInit::Zero;
  auto m = buildModel<float>(cfg, InputSpec{Shape{1, 1, 12}, 5, 40});
  Rng rng(3, -1, -1, Purpose::Init);
  m->initialize(rng);
  ModelConfig plainCfg = cfg;
  plainCfg.initScheme = InitScheme::PytorchDefault;
  plainCfg.initBias = BiasInit::Default;
  auto plain = buildModel<float>(plainCfg, InputSpec{Shape{1, 1, 12}, 5, 40});
  Rng rng2(3, -1, -1, Purpose::Init);
  plain->initialize(rng2);
  for (const LayerBlock& block : m->blocks())
    for (const ParamTensor& t : block.tensors) {
      const float* p = m->params() + t.offset;
      if (t.isBias) {
        EXPECT_EQ(momentsOf(p, t.size).maxAbs, 0.0) << t.name;
      } else if (block.name != "fc1") {
        // Embedding and LSTM weights keep PyTorch's default (the same draws); fc1 is kaiming_normal.
        EXPECT_TRUE(std::equal(p, p + t.size, plain->params() + t.offset)) << t.name;
      } else {
        EXPECT_FALSE(std::equal(p, p + t.size, plain->params() + t.offset)) << t.name;
      }
    }
}

TEST(Init, TransformerLinearTensorsFollowTheScheme) {
  // d = 64: attention weights fan_in 64 (sd sqrt(2/64)), W1 fan_in 64, W2 fan_in 256; zero biases;
  // the embedding keeps its unit rows (the same draws as the default scheme).
  const int d = 64;
  ModelConfig cfg;
  cfg.name = ModelPreset::TransformerPlayerFl;
  cfg.embedDim = d;
  cfg.initScheme = InitScheme::KaimingNormal;
  cfg.initBias = BiasInit::Zero;
  const InputSpec in{Shape{1, 1, 10}, 3, 50};
  auto m = buildModel<float>(cfg, in);
  Rng rng(4, -1, -1, Purpose::Init);
  m->initialize(rng);
  ModelConfig plainCfg = cfg;
  plainCfg.initScheme = InitScheme::PytorchDefault;
  plainCfg.initBias = BiasInit::Default;
  auto plain = buildModel<float>(plainCfg, in);
  Rng rng2(4, -1, -1, Purpose::Init);
  plain->initialize(rng2);
  const auto& emb = m->blocks()[0];
  EXPECT_TRUE(std::equal(m->params() + emb.offset, m->params() + emb.offset + emb.size, plain->params() + emb.offset));
  for (int b : {1, 2})
    for (const ParamTensor& t : m->blocks()[b].tensors) {
      const Moments w = momentsOf(m->params() + t.offset, t.size);
      if (t.isBias) {
        EXPECT_EQ(w.maxAbs, 0.0) << t.name;
      } else {
        const double fanIn = t.name == "feedforward.w2" ? 4.0 * d : d;
        EXPECT_NEAR(w.sd, std::sqrt(2.0 / fanIn), 0.03 * std::sqrt(2.0 / fanIn)) << t.name;
      }
    }
}

}  // namespace
}  // namespace fedsilo::test
