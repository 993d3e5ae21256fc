// Finite-difference checks of every layer's parameter and input gradients (double precision).
#include <gtest/gtest.h>

#include "nn/conv2d.hpp"
#include "nn/dense.hpp"
#include "nn/dropout.hpp"
#include "nn/embedding.hpp"
#include "nn/lstm.hpp"
#include "nn/pool.hpp"
#include "grad_check.hpp"

namespace fedsilo::test {
namespace {

GradCheckResult checkLayer(LayerT<double>& layer, int inRows, int batch, std::uint64_t seed,
                           const GradCheckOptions& opt = {}) {
  Rng rng(seed, -1, -1, Purpose::Init);
  LayerParams lp(layer, rng);
  // Biases start non-zero so that a bias gradient routed to the wrong place shows.
  for (auto& p : lp.params) p += 0.1 * rng.uniform(-1.0, 1.0);
  return checkLayerGradients(layer, lp, randomVector(static_cast<std::size_t>(inRows) * batch, seed + 100), inRows,
                             batch, opt);
}

TEST(LayerGradients, Dense) {
  DenseT<double> d(4, 3);
  GradCheckOptions opt;
  EXPECT_GRADIENTS_OK(checkLayer(d, 4, 3, 1, opt), opt);
}

TEST(LayerGradients, ReluAwayFromKink) {
  ReluT<double> r(Shape{6, 1, 1});
  r.reserve(4);
  // |x| >= 0.1 >> eps: no perturbation crosses the kink.
  std::vector<double> x = randomVector(24, 3, 0.1, 1.0);
  for (std::size_t i = 0; i < x.size(); i += 2) x[i] = -x[i];
  Rng rng(1, -1, -1, Purpose::Init);
  LayerParams lp(r, rng);
  GradCheckOptions opt;
  const auto res = checkLayerGradients(r, lp, x, 6, 4, opt);
  EXPECT_GRADIENTS_OK(res, opt);
  EXPECT_EQ(res.inputsChecked, 24);
}

struct ConvCase {
  int inC, h, w, outC, k, stride, pad;
};

std::string describe(const ConvCase& c) {
  return "in " + std::to_string(c.inC) + "x" + std::to_string(c.h) + "x" + std::to_string(c.w) + " out " +
         std::to_string(c.outC) + " k" + std::to_string(c.k) + " s" + std::to_string(c.stride) + " p" +
         std::to_string(c.pad);
}

std::vector<ConvCase> convCases() {
  std::vector<ConvCase> cases = {
      {1, 5, 5, 2, 3, 1, 0}, {2, 6, 5, 3, 3, 1, 1}, {3, 7, 7, 2, 5, 1, 2}, {2, 7, 6, 3, 3, 2, 0},
      {2, 8, 8, 2, 3, 2, 1}, {1, 9, 7, 2, 5, 2, 2}, {2, 5, 5, 3, 1, 1, 0}, {1, 4, 4, 1, 4, 1, 0},
  };
  // Plus random geometries (stride 1-2, pad 0-2, kernel 1-5).
  Rng rng(2024, -1, -1, Purpose::Misc);
  while (cases.size() < 16) {
    ConvCase c{1 + static_cast<int>(rng.below(3)), 3 + static_cast<int>(rng.below(6)), 3 + static_cast<int>(rng.below(6)),
               1 + static_cast<int>(rng.below(3)), 1 + static_cast<int>(rng.below(5)), 1 + static_cast<int>(rng.below(2)),
               static_cast<int>(rng.below(3))};
    if (c.h + 2 * c.pad >= c.k && c.w + 2 * c.pad >= c.k) cases.push_back(c);
  }
  return cases;
}

TEST(LayerGradients, Conv2DManyShapes) {
  std::uint64_t seed = 10;
  for (const auto& c : convCases()) {
    SCOPED_TRACE(describe(c));
    Conv2DT<double> conv(c.inC, c.h, c.w, c.outC, c.k, c.stride, c.pad);
    GradCheckOptions opt;
    EXPECT_GRADIENTS_OK(checkLayer(conv, c.inC * c.h * c.w, 3, seed++, opt), opt);
  }
}

TEST(LayerGradients, Conv2DSeveralChunks) {
  // A chunk limit of one sample's im2col forces 3 chunks for a batch of 3: exercises the chunk
  // loop, the accumulated weight gradient and the im2col recomputation in backward.
  for (const auto& c : {ConvCase{2, 6, 6, 3, 3, 1, 1}, ConvCase{2, 7, 5, 2, 3, 2, 2}}) {
    SCOPED_TRACE(describe(c));
    Conv2DT<double> conv(c.inC, c.h, c.w, c.outC, c.k, c.stride, c.pad);
    const Index perSample = static_cast<Index>(conv.outputShape().h) * conv.outputShape().w * c.inC * c.k * c.k;
    conv.setMaxChunkElems(perSample);
    EXPECT_EQ(conv.chunkSamples(3), 1);
    GradCheckOptions opt;
    EXPECT_GRADIENTS_OK(checkLayer(conv, c.inC * c.h * c.w, 3, 77, opt), opt);
  }
}

TEST(LayerGradients, MaxPool) {
  struct Case {
    int c, h, w, k, s;
  };
  for (const auto& p : {Case{2, 6, 6, 2, 2}, Case{2, 7, 7, 2, 2}, Case{1, 5, 7, 3, 2}, Case{3, 4, 4, 2, 1}}) {
    SCOPED_TRACE(std::to_string(p.h) + "x" + std::to_string(p.w) + " k" + std::to_string(p.k));
    MaxPool2DT<double> pool(p.c, p.h, p.w, p.k, p.s);
    GradCheckOptions opt;
    const auto res = checkLayer(pool, p.c * p.h * p.w, 3, 31, opt);
    EXPECT_GRADIENTS_OK(res, opt);
  }
}

TEST(LayerGradients, GlobalAvgPoolAndFlatten) {
  GlobalAvgPoolT<double> gap(3, 4, 5);
  GradCheckOptions opt;
  EXPECT_GRADIENTS_OK(checkLayer(gap, 60, 2, 5, opt), opt);
  FlattenT<double> flat(Shape{2, 3, 3});
  EXPECT_GRADIENTS_OK(checkLayer(flat, 18, 2, 6, opt), opt);
}

TEST(LayerGradients, DropoutFixedMask) {
  DropoutT<double> drop(Shape{20, 1, 1}, 0.3);
  GradCheckOptions opt;
  EXPECT_GRADIENTS_OK(checkLayer(drop, 20, 4, 8, opt), opt);
  opt.training = false;  // evaluation: identity
  EXPECT_GRADIENTS_OK(checkLayer(drop, 20, 4, 8, opt), opt);
}

TEST(LayerGradients, EmbeddingParams) {
  const int vocab = 7, dim = 3, seq = 5, batch = 4;
  EmbeddingT<double> emb(vocab, dim, seq);
  Rng rng(3, -1, -1, Purpose::Init);
  LayerParams lp(emb, rng);
  std::vector<double> ids(seq * batch);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<double>((i * 5 + 1) % vocab);  // repeats
  GradCheckOptions opt;
  opt.checkInput = false;  // token ids are not differentiable
  const auto res = checkLayerGradients(emb, lp, ids, seq, batch, opt);
  EXPECT_GRADIENTS_OK(res, opt);
  EXPECT_EQ(res.paramsChecked, vocab * dim);
}

TEST(LayerGradients, LstmSingleLayer) {
  for (bool seq : {false, true}) {
    SCOPED_TRACE(seq ? "returnSequences" : "last state");
    LstmT<double> lstm(3, 4, 5, seq);
    GradCheckOptions opt;
    EXPECT_GRADIENTS_OK(checkLayer(lstm, 15, 3, seq ? 41 : 42, opt), opt);
  }
}

TEST(LayerGradients, LstmSequenceLengthOne) {
  LstmT<double> lstm(2, 3, 1, true);
  GradCheckOptions opt;
  EXPECT_GRADIENTS_OK(checkLayer(lstm, 2, 2, 43, opt), opt);
}

TEST(LayerGradients, LstmTwoStackedInAModel) {
  // lstm1 (sequences) -> lstm2 (last state, or sequences) -> dense, as the lstm preset stacks them.
  for (bool lastSeq : {false, true}) {
    SCOPED_TRACE(lastSeq ? "top layer returns sequences" : "top layer returns last state");
    const int in = 3, hidden = 4, steps = 4, classes = 3, batch = 3;
    ModelT<double> m(Shape{1, steps, in}, classes);
    m.add(std::make_unique<LstmT<double>>(in, hidden, steps, true), "lstm1");
    m.add(std::make_unique<LstmT<double>>(hidden, hidden, steps, lastSeq), "lstm2");
    m.add(std::make_unique<DenseT<double>>(lastSeq ? hidden * steps : hidden, classes), "fc1");
    m.finalize();
    Rng rng(44, -1, -1, Purpose::Init);
    m.initialize(rng);
    GradCheckOptions opt;
    const auto res = checkModelGradients(m, randomVector(in * steps * batch, 45), {0, 2, 1}, batch, opt);
    EXPECT_GRADIENTS_OK(res, opt);
  }
}

}  // namespace
}  // namespace fedsilo::test
