// Conv2D + ReLU + 2 x 2 max-pool: ModelT runs the three forward passes as one and the three backward
// passes as one (PoolFusableT; ConvDirect::forwardPooled/backwardPooled, ConvBf16's in bf16: the ReLU's
// output pooled in cache and never stored, the convolution's dL/dz rebuilt from the pool's output,
// gradient and window positions), and that must change no bit against the three layers run one by one:
// logits, parameter gradients, input gradients, and parameters after fused SGD steps; in fp32 with every
// kernel set, in bf16 with its own. Shapes: both presets that have the triple (even sides: bf16's
// one-pass gradient pairs), and a small model whose convolution outputs have odd sides (the pool leaves
// the last row and column out; odd columns take bf16's fp32-rows path), at batches of several chunks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bf16_check.hpp"
#include "isa_scope.hpp"
#include "model_batches.hpp"
#include "nn/conv2d.hpp"
#include "nn/dense.hpp"
#include "nn/model.hpp"
#include "nn/pool.hpp"
#include "nn/presets.hpp"

namespace fedsilo::test {
namespace {

const InputSpec kImage{Shape{1, 28, 28}, 10, 0};
const InputSpec kSmallImage{Shape{1, 16, 16}, 10, 0};
const InputSpec kOddImage{Shape{2, 7, 9}, 10, 0};

// conv 2 -> 5 (3 x 3, pad 1) on 7 x 9, ReLU, max-pool to 3 x 4, conv 5 -> 4 (3 x 3, pad 1), ReLU, max-pool
// to 1 x 2, dense 8 -> 10: two triples, odd sides and channel counts.
std::unique_ptr<Model> oddModel() {
  auto m = std::make_unique<Model>(kOddImage.shape, 10);
  m->add(std::make_unique<Conv2D>(2, 7, 9, 5, 3, 1, 1), "conv1");
  m->add(std::make_unique<Relu>(Shape{5, 7, 9}));
  m->add(std::make_unique<MaxPool2D>(5, 7, 9, 2, 2));
  m->add(std::make_unique<Conv2D>(5, 3, 4, 4, 3, 1, 1), "conv2");
  m->add(std::make_unique<Relu>(Shape{4, 3, 4}));
  m->add(std::make_unique<MaxPool2D>(4, 3, 4, 2, 2));
  m->add(std::make_unique<Flatten>(Shape{4, 1, 2}));
  m->add(std::make_unique<Dense>(8, 10), "fc");
  m->finalize();
  return m;
}

std::unique_ptr<Model> build(const std::string& name, const InputSpec& in) {
  if (name == "odd") return oddModel();
  ModelConfig cfg;
  cfg.name = parseEnum<ModelPreset>("model", name);
  return buildModel<float>(cfg, in);
}

// A model built with bf16 on or off (the layers choose their path when built), initialised, with fusion
// on or off.
std::unique_ptr<Model> model(const std::string& name, const InputSpec& in, int reserve, bool fusion, bool bf16) {
  std::unique_ptr<Model> m;
  if (bf16) {
    Bf16Scope scope;
    m = build(name, in);
  } else {
    m = build(name, in);
  }
  return ready(std::move(m), 5, reserve, fusion);
}

std::vector<float> inputs(const InputSpec& in, int batch, std::uint64_t seed) {
  return uniformBatch(in, batch, seed, -0.5, 1.0);  // negative inputs: ReLU zeros in every layer
}

std::vector<std::int32_t> labels(int batch) { return spreadLabels(batch, 10, 3, 1); }

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Step {
  std::vector<float> logits, grads, dinput, paramsAfterSgd;
  int triples = 0;
};

Step run(const std::string& name, const InputSpec& in, int batch, bool fusion, bool bf16) {
  auto m = model(name, in, batch, fusion, bf16);
  Step s;
  s.triples = m->pooledTriples();
  const auto x = inputs(in, batch, 17);
  CMapT<float> lg = m->forward(x.data(), batch, true);
  s.logits.assign(lg.data(), lg.data() + lg.size());
  std::vector<float> dl(s.logits.size());
  for (std::size_t i = 0; i < dl.size(); ++i) dl[i] = 0.02f * static_cast<float>(static_cast<int>(i % 11) - 5);
  s.dinput.assign(x.size(), -3.0f);
  m->backward(dl.data(), batch, s.dinput.data());
  s.grads.assign(m->grads(), m->grads() + m->numParams());
  const auto y = labels(batch);
  for (int step = 0; step < 3; ++step) {  // the fused update feeds the next forward
    const auto xs = inputs(in, batch, 30 + step);
    m->sgdStep(xs.data(), y.data(), batch, 0.05f);
  }
  s.paramsAfterSgd.assign(m->params(), m->params() + m->numParams());
  return s;
}

struct Case {
  const char* name;
  InputSpec in;
  int batch, triples;
};
// batch 37: several convolution chunks and a last partial one
const Case kCases[] = {{"cnn_mcmahan", kImage, 37, 2}, {"cnn_playerfl", kSmallImage, 5, 3}, {"odd", kOddImage, 37, 2}};

// maxBatch: the plain loops of the generic set take seconds per W2 step at batch 37.
void expectFusedIsLayerByLayer(bool bf16, int maxBatch) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const int batch = std::min(c.batch, maxBatch);
    const Step fused = run(c.name, c.in, batch, true, bf16), plain = run(c.name, c.in, batch, false, bf16);
    EXPECT_EQ(fused.triples, c.triples);  // the fused passes really ran
    EXPECT_EQ(plain.triples, 0);
    EXPECT_TRUE(sameBits(fused.logits, plain.logits)) << "logits";
    EXPECT_TRUE(sameBits(fused.grads, plain.grads)) << "parameter gradients";
    EXPECT_TRUE(sameBits(fused.dinput, plain.dinput)) << "input gradient";
    EXPECT_TRUE(sameBits(fused.paramsAfterSgd, plain.paramsAfterSgd)) << "parameters after three SGD steps";
  }
}

TEST(PoolFusion, Fp32TriplesAreTheLayerByLayerBitsInEverySet) {
  for (Isa isa : runnableIsas()) {
    SCOPED_TRACE(isaName(isa));
    IsaScope scope(isa);
    expectFusedIsLayerByLayer(false, isa == Isa::Avx512 ? 37 : 9);  // 9: still several chunks
  }
}

TEST(PoolFusion, Bf16TriplesAreTheLayerByLayerBits) {
  if (skipWithoutBf16()) GTEST_SKIP() << bf16Missing();
  expectFusedIsLayerByLayer(true, 37);
}

// A forward with fusion on leaves the ReLU's output unwritten: a backward after setFusion(false) must
// still run the fused passes, with the results of a model that kept fusion on throughout.
TEST(PoolFusion, BackwardRunsThePassesOfItsForward) {
  const int batch = 8;
  auto a = model("cnn_mcmahan", kImage, batch, true, false), b = model("cnn_mcmahan", kImage, batch, true, false);
  const auto x = inputs(kImage, batch, 41);
  std::vector<float> dl(static_cast<std::size_t>(10) * batch, 0.01f), dxa(x.size()), dxb(x.size());
  a->forward(x.data(), batch, true);
  a->backward(dl.data(), batch, dxa.data());
  b->forward(x.data(), batch, true);
  b->setFusion(false);
  b->backward(dl.data(), batch, dxb.data());
  EXPECT_TRUE(sameBits(std::vector<float>(a->grads(), a->grads() + a->numParams()),
                       std::vector<float>(b->grads(), b->grads() + b->numParams())));
  EXPECT_TRUE(sameBits(dxa, dxb));
}

}  // namespace
}  // namespace fedsilo::test
