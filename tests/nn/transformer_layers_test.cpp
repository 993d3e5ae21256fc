// The transformer layers (nn/token_position_embedding, self_attention, feed_forward, first_token):
// finite-difference gradient checks, forward values against a direct loop implementation, padding
// masks, and the transformer_playerfl preset's blocks and parameter count.
#include <gtest/gtest.h>

#include <cmath>

#include "nn/feed_forward.hpp"
#include "nn/first_token.hpp"
#include "nn/presets.hpp"
#include "nn/self_attention.hpp"
#include "nn/token_position_embedding.hpp"
#include "grad_check.hpp"

namespace fedsilo::test {
namespace {

// Binds `layer` to random parameters (biases non-zero, so that a misrouted bias gradient shows).
LayerParams randomParams(LayerT<double>& layer, std::uint64_t seed) {
  Rng rng(seed, -1, -1, Purpose::Init);
  LayerParams lp(layer, rng);
  for (auto& p : lp.params) p += 0.1 * rng.uniform(-1.0, 1.0);
  return lp;
}

// A mask with the given real/padding flags, sample-major.
std::shared_ptr<PaddingMask> maskOf(int seqLen, const std::vector<std::uint8_t>& real) {
  auto m = std::make_shared<PaddingMask>();
  m->seqLen = seqLen;
  m->real = real;
  return m;
}

// y = x + W_o attention(x) + b_o computed with plain loops, one sample (d x T column-major).
std::vector<double> attentionByLoops(const std::vector<double>& w, const double* x, int d, int T,
                                     const std::vector<bool>& real) {
  auto W = [&](int which, int r, int c) { return w[static_cast<std::size_t>(which) * d * d + r * d + c]; };
  std::vector<double> q(d * T), k(d * T), v(d * T), y(d * T);
  for (int t = 0; t < T; ++t)
    for (int r = 0; r < d; ++r) {
      double sq = 0, sk = 0, sv = 0;
      for (int c = 0; c < d; ++c) {
        sq += W(0, r, c) * x[t * d + c];
        sk += W(1, r, c) * x[t * d + c];
        sv += W(2, r, c) * x[t * d + c];
      }
      q[t * d + r] = sq, k[t * d + r] = sk, v[t * d + r] = sv;
    }
  for (int i = 0; i < T; ++i) {
    std::vector<double> p(T, 0.0);
    double mx = -1e300, sum = 0;
    for (int j = 0; j < T; ++j) {
      if (!real[j]) continue;
      double s = 0;
      for (int c = 0; c < d; ++c) s += q[i * d + c] * k[j * d + c];
      p[j] = s / std::sqrt(static_cast<double>(d));
      mx = std::max(mx, p[j]);
    }
    for (int j = 0; j < T; ++j) sum += real[j] ? (p[j] = std::exp(p[j] - mx)) : (p[j] = 0.0);
    std::vector<double> a(d, 0.0);
    for (int j = 0; j < T; ++j)
      for (int c = 0; c < d; ++c) a[c] += p[j] / sum * v[j * d + c];
    for (int r = 0; r < d; ++r) {
      double s = x[i * d + r] + w[static_cast<std::size_t>(4) * d * d + r];
      for (int c = 0; c < d; ++c) s += W(3, r, c) * a[c];
      y[i * d + r] = s;
    }
  }
  return y;
}

TEST(TransformerLayers, EmbeddingAddsTokenAndPositionRowsAndMarksPadding) {
  const int vocab = 6, dim = 3, seq = 4, maxLen = 7, batch = 2;
  auto mask = std::make_shared<PaddingMask>();
  TokenPositionEmbeddingT<double> emb(vocab, dim, seq, maxLen, mask);
  LayerParams lp = randomParams(emb, 1);
  emb.reserve(batch);
  const std::vector<double> ids = {0, 3, 5, 3, 2, 0, 0, 1};
  std::vector<double> y(static_cast<std::size_t>(seq) * dim * batch);
  CMapT<double> xm(ids.data(), seq, batch);
  MapT<double> ym(y.data(), seq * dim, batch);
  emb.forward(xm, ym, true);
  for (int b = 0; b < batch; ++b)
    for (int t = 0; t < seq; ++t) {
      const int id = static_cast<int>(ids[b * seq + t]);
      for (int j = 0; j < dim; ++j)
        EXPECT_DOUBLE_EQ(y[(b * seq + t) * dim + j], lp.params[id * dim + j] + lp.params[(vocab + t) * dim + j]);
      EXPECT_EQ(mask->isReal(b, t), id != 0);
    }
}

TEST(TransformerLayers, EmbeddingInitialRowsHaveUnitLength) {
  TokenPositionEmbeddingT<double> emb(5, 4, 3, 3, nullptr);
  Rng rng(2, -1, -1, Purpose::Init);
  LayerParams lp(emb, rng);
  for (int r = 0; r < 5 + 3; ++r) {
    double n2 = 0;
    for (int j = 0; j < 4; ++j) n2 += lp.params[r * 4 + j] * lp.params[r * 4 + j];
    EXPECT_NEAR(n2, 1.0, 1e-12);
  }
}

TEST(TransformerLayers, EmbeddingGradients) {
  // seqLen < maxLen: the unused position rows must get a zero gradient (checked numerically too).
  const int vocab = 7, dim = 3, seq = 4, maxLen = 6, batch = 3;
  TokenPositionEmbeddingT<double> emb(vocab, dim, seq, maxLen, std::make_shared<PaddingMask>());
  LayerParams lp = randomParams(emb, 3);
  std::vector<double> ids(seq * batch);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<double>((i * 5 + 1) % vocab);  // repeats
  GradCheckOptions opt;
  opt.checkInput = false;  // token ids are not differentiable
  const auto res = checkLayerGradients(emb, lp, ids, seq, batch, opt);
  EXPECT_GRADIENTS_OK(res, opt);
  EXPECT_EQ(res.paramsChecked, (vocab + maxLen) * dim);
}

TEST(TransformerLayers, EmbeddingRejectsSequencesLongerThanThePositionTable) {
  EXPECT_THROW(TokenPositionEmbeddingT<double>(5, 4, 10, 9, nullptr), ConfigError);
}

TEST(TransformerLayers, AttentionMatchesLoops) {
  const int d = 4, T = 5, batch = 3;
  // Sample 1 has two padded positions; the others none.
  std::vector<std::uint8_t> real(T * batch, 1);
  real[T + 1] = real[T + 4] = 0;
  SelfAttentionT<double> att(d, T, maskOf(T, real));
  LayerParams lp = randomParams(att, 4);
  att.reserve(batch);
  const std::vector<double> x = randomVector(static_cast<std::size_t>(d) * T * batch, 5);
  std::vector<double> y(x.size());
  CMapT<double> xm(x.data(), d * T, batch);
  MapT<double> ym(y.data(), d * T, batch);
  att.forward(xm, ym, true);
  for (int b = 0; b < batch; ++b) {
    std::vector<bool> r(T);
    for (int t = 0; t < T; ++t) r[t] = real[b * T + t] != 0;
    const std::vector<double> ref = attentionByLoops(lp.params, x.data() + b * d * T, d, T, r);
    for (int i = 0; i < d * T; ++i) EXPECT_NEAR(y[b * d * T + i], ref[i], 1e-12) << "sample " << b << " entry " << i;
  }
}

TEST(TransformerLayers, AttentionIgnoresPaddedKeys) {
  // Changing a padded token's input changes no other token's output.
  const int d = 3, T = 4;
  SelfAttentionT<double> att(d, T, maskOf(T, {1, 1, 0, 1}));
  randomParams(att, 6);
  att.reserve(1);
  std::vector<double> x = randomVector(static_cast<std::size_t>(d) * T, 7), y1(x.size()), y2(x.size());
  MapT<double> m1(y1.data(), d * T, 1), m2(y2.data(), d * T, 1);
  att.forward(CMapT<double>(x.data(), d * T, 1), m1, true);
  for (int c = 0; c < d; ++c) x[2 * d + c] += 0.7;
  att.forward(CMapT<double>(x.data(), d * T, 1), m2, true);
  for (int t : {0, 1, 3})
    for (int c = 0; c < d; ++c) EXPECT_EQ(y1[t * d + c], y2[t * d + c]);
  EXPECT_NE(y1[2 * d], y2[2 * d]);
}

TEST(TransformerLayers, AttentionOnAllPaddingIsFinite) {
  const int d = 3, T = 3;
  SelfAttentionT<double> att(d, T, maskOf(T, {0, 0, 0}));
  LayerParams lp = randomParams(att, 8);
  att.reserve(1);
  const std::vector<double> x = randomVector(static_cast<std::size_t>(d) * T, 9);
  std::vector<double> y(x.size());
  MapT<double> ym(y.data(), d * T, 1);
  att.forward(CMapT<double>(x.data(), d * T, 1), ym, true);
  const std::vector<double> ref = attentionByLoops(lp.params, x.data(), d, T, {true, true, true});
  for (int i = 0; i < d * T; ++i) EXPECT_NEAR(y[i], ref[i], 1e-12);
}

TEST(TransformerLayers, AttentionGradients) {
  const int d = 4, T = 5, batch = 3;
  for (bool padded : {false, true}) {
    SCOPED_TRACE(padded ? "with padding" : "no padding");
    std::vector<std::uint8_t> real(T * batch, 1);
    if (padded) real[0] = real[T + 3] = real[2 * T + 4] = 0;
    SelfAttentionT<double> att(d, T, maskOf(T, real));
    LayerParams lp = randomParams(att, 10);
    GradCheckOptions opt;
    EXPECT_GRADIENTS_OK(
        checkLayerGradients(att, lp, randomVector(static_cast<std::size_t>(d) * T * batch, 11), d * T, batch, opt),
        opt);
  }
}

TEST(TransformerLayers, FeedForwardGradients) {
  const int d = 3, hidden = 12, T = 4, batch = 3;
  FeedForwardT<double> ff(d, hidden, T);
  LayerParams lp = randomParams(ff, 12);
  GradCheckOptions opt;
  EXPECT_GRADIENTS_OK(
      checkLayerGradients(ff, lp, randomVector(static_cast<std::size_t>(d) * T * batch, 13), d * T, batch, opt), opt);
}

TEST(TransformerLayers, FirstTokenGradients) {
  FirstTokenT<double> first(3, 4);
  Rng rng(1, -1, -1, Purpose::Init);
  LayerParams lp(first, rng);
  GradCheckOptions opt;
  opt.checkParams = false;
  const auto res = checkLayerGradients(first, lp, randomVector(12 * 2, 14), 12, 2, opt);
  EXPECT_GRADIENTS_OK(res, opt);
  EXPECT_EQ(res.inputsChecked, 24);
}

ModelConfig transformerConfig(int dim, int maxLen = 0) {
  ModelConfig cfg;
  cfg.name = ModelPreset::TransformerPlayerFl;
  cfg.embedDim = dim;
  cfg.maxLen = maxLen;
  return cfg;
}

TEST(TransformerLayers, PresetGradientsWithPadding) {
  const int T = 5, vocab = 9, classes = 3, batch = 4;
  InputSpec in{Shape{1, 1, T}, classes, vocab};
  ModelConfig cfg = transformerConfig(4, 7);
  cfg.loss = LossKind::Focal;
  cfg.focalAlpha = {0.5, 1.0, 2.0};
  auto m = buildModel<double>(cfg, in);
  Rng rng(15, -1, -1, Purpose::Init);
  m->initialize(rng);
  // Left-padded like LEAF text: sample 1 starts with two pads, sample 3 is one token.
  const std::vector<double> ids = {3, 4, 5, 6, 7, 0, 0, 2, 8, 1, 4, 4, 4, 3, 2, 0, 0, 0, 0, 6};
  GradCheckOptions opt;
  opt.checkInput = false;
  const auto res = checkModelGradients(*m, ids, {0, 2, 1, 2}, batch, opt);
  EXPECT_GRADIENTS_OK(res, opt);
}

TEST(TransformerLayers, PresetBlocksFollowTheAuthorsGrouping) {
  const int T = 6, vocab = 11, classes = 4, d = 8;
  auto m = buildModel<float>(transformerConfig(d), InputSpec{Shape{1, 1, T}, classes, vocab});
  std::vector<std::string> names;
  for (const auto& b : m->blocks()) names.push_back(b.name);
  EXPECT_EQ(names, (std::vector<std::string>{"embedding", "attention", "feedforward", "head"}));
  EXPECT_EQ(m->blocks()[0].size, (vocab + T) * d);
  EXPECT_EQ(m->blocks()[1].size, 4 * d * d + d);
  EXPECT_EQ(m->blocks()[2].size, 2 * d * 4 * d + 4 * d + d);
  EXPECT_EQ(m->blocks()[3].size, d * classes + classes);
}

TEST(TransformerLayers, PresetParameterCountOfTheAuthorsSentimentModel) {
  // Their Sentiment model: d = 768, 119 positions, BERT-base's 30522-token vocabulary, 2 classes.
  // embedding 30522*768 + 119*768 = 23,532,288; attention 4*768^2 + 768 = 2,360,064;
  // feed-forward 2*768*3072 + 3072 + 768 = 4,722,432; head 768*2 + 2 = 1,538.
  auto m = buildModel<float>(transformerConfig(768), InputSpec{Shape{1, 1, 119}, 2, 30522});
  EXPECT_EQ(m->numParams(), 30616322);
}

TEST(TransformerLayers, PresetRefusesWhatItCannotUse) {
  EXPECT_THROW(buildModel<float>(transformerConfig(8), InputSpec{Shape{10, 1, 1}, 3, 0}), ConfigError);  // no vocabulary
  EXPECT_THROW(buildModel<float>(transformerConfig(8, 5), InputSpec{Shape{1, 1, 6}, 3, 20}), ConfigError);  // max_len
  ModelConfig cfg = transformerConfig(8);
  cfg.loss = LossKind::Focal;
  cfg.focalAlpha = {1.0, 2.0};
  EXPECT_THROW(buildModel<float>(cfg, InputSpec{Shape{1, 1, 6}, 3, 20}), ConfigError);  // 2 weights, 3 classes
}

}  // namespace
}  // namespace fedsilo::test
