// Whole training steps, a local epoch and an evaluation (bench_main.cpp: the groups Step/,
// StepPrecision/, LocalTrainer/, Eval/).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "peak_share.hpp"
#include "data/dataset.hpp"
#include "fl/local_trainer.hpp"
#include "nn/bf16.hpp"
#include "nn/model.hpp"
#include "nn/presets.hpp"

namespace {

using namespace fedsilo;
using namespace fedsilo::bench;

// A whole training step: forward, loss, backward, SGD. Args: model (0 mlp = W1, 1 cnn_mcmahan = W2,
// 2 cnn_playerfl), batch, fused (1 default; 0 runs Dense/Conv2D and ReLU as separate layers), sgd (0
// lossAndGradient + Sgd::step, 1 Model::sgdStep: the SGD update fused into the Dense weight gradient,
// what LocalTrainer runs for plain SGD).
void BM_TrainStep(benchmark::State& st) {
  static const char* const kNames[] = {"mlp", "cnn_mcmahan", "cnn_playerfl"};
  // exact training FLOPs per sample: forward + weight gradients + input gradients of every layer but the
  // first, 2 FLOPs per multiply-add (docs/performance.md, "FLOPs per sample")
  static const double kFlops[] = {879200.0, 72384512.0, 486866800.0};
  const int which = static_cast<int>(st.range(0)), batch = static_cast<int>(st.range(1));
  const std::string name = kNames[which];
  bool known = false;
  for (const auto& n : modelPresetNames()) known = known || n == name;
  if (!known) {
    st.SkipWithError(("preset " + name + " not built").c_str());
    for (auto _ : st) {
    }
    return;
  }
  ModelConfig cfg;
  cfg.name = parseEnum<ModelPreset>("model", name);
  auto m = buildModel<float>(cfg, InputSpec{Shape{1, 28, 28}, 10, 0});
  Rng init(0, -1, -1, Purpose::Init);
  m->initialize(init);
  m->reserve(batch);
#ifndef FEDSILO_BENCH_BASELINE
  m->setFusion(st.range(2) != 0);
  const bool fusedSgd = st.range(3) != 0;
#else
  const bool fusedSgd = false;
#endif
  std::vector<float> x = randomFloats(784u * batch, 4, 0.0f, 1.0f);
  std::vector<std::int32_t> y(batch);
  for (int j = 0; j < batch; ++j) y[j] = j % 10;
  PlainSgd sgd(0.01, 0.0, static_cast<std::size_t>(m->numParams()));
  m->lossAndGradient(x.data(), y.data(), batch);  // warm-up
  AllocCounter count;
  for (auto _ : st) {
#ifndef FEDSILO_BENCH_BASELINE
    if (fusedSgd) {
      benchmark::DoNotOptimize(m->sgdStep(x.data(), y.data(), batch, 0.01f));
      continue;
    }
#endif
    benchmark::DoNotOptimize(m->lossAndGradient(x.data(), y.data(), batch));
    sgd.step(m->params(), m->grads(), static_cast<std::size_t>(m->numParams()));
  }
  (void)fusedSgd;
  st.counters["mallocs/step"] = static_cast<double>(count.stop()) / static_cast<double>(st.iterations());
  st.counters["samples/s"] = benchmark::Counter(batch, benchmark::Counter::kIsIterationInvariantRate);
  setFlops(st, kFlops[which] * batch);
}
BENCHMARK(BM_TrainStep)
    ->Name("Step")
    ->ArgNames({"model", "batch", "fused", "sgd"})
    ->Args({0, 32, 1, 0})
    ->Args({0, 32, 1, 1})
    ->Args({0, 32, 0, 0})
    ->Args({1, 32, 1, 0})
    ->Args({1, 32, 1, 1})
    ->Args({2, 128, 1, 1})
    ->Unit(benchmark::kMicrosecond);

// A training step (forward, loss, backward, SGD) of the PLayer-FL presets beyond FashionMNIST, at the
// shapes bench/torch_steps.py runs in PyTorch (bench/compare_torch_steps.sh compares the two): Args
// model 0 = cnn_playerfl_cifar on 3 x 32 x 32 images, 10 classes; 1 = transformer_playerfl at the
// authors' width (d = 768) on 119-token sequences (no padding) of a 10,000-token vocabulary, 2 classes.
// Exact training FLOPs per sample, 2 per multiply-add, input gradients of every layer but the first:
//   cnn_playerfl_cifar: forward multiply-adds conv1 1,997,568 (34 x 34 x 64 x 27), conv2 95,551,488,
//     conv3 117,964,800, conv4 570,949,632, conv5 398,721,024, fc1 51,200, fc2 1,000;
//     2 (3 F - conv1) = 7,107,425,136;
//   transformer_playerfl: 2 x 3 x (12 d^2 T + 2 T^2 d + 2 d) = 5,184,129,024 (QKV 3 d^2 T, projection
//     d^2 T, feed-forward 8 d^2 T, scores and mixing T^2 d each, head 2 d; the embedding is a gather).
void BM_PaperStep(benchmark::State& st) {
  const bool transformer = st.range(0) == 1;
  const int batch = static_cast<int>(st.range(1));
  constexpr int kTokens = 119, kVocab = 10000;
  ModelConfig cfg;
  cfg.name = transformer ? ModelPreset::TransformerPlayerFl : ModelPreset::CnnPlayerFlCifar;
  cfg.embedDim = 768;
  const InputSpec in = transformer ? InputSpec{Shape{kTokens}, 2, kVocab} : InputSpec{Shape{3, 32, 32}, 10, 0};
  auto m = buildModel<float>(cfg, in);
  Rng init(0, -1, -1, Purpose::Init);
  m->initialize(init);
  m->reserve(batch);
  const std::size_t inSize = static_cast<std::size_t>(in.shape.size()) * batch;
  std::vector<float> x = randomFloats(inSize, 4, 0.0f, 1.0f);
  if (transformer)
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(1 + (i * 7919) % (kVocab - 1));
  std::vector<std::int32_t> y(batch);
  for (int j = 0; j < batch; ++j) y[j] = j % in.numClasses;
  m->sgdStep(x.data(), y.data(), batch, 1e-4f);  // warm-up
  for (auto _ : st) benchmark::DoNotOptimize(m->sgdStep(x.data(), y.data(), batch, 1e-4f));
  st.counters["samples/s"] = benchmark::Counter(batch, benchmark::Counter::kIsIterationInvariantRate);
  setFlopsAndShare(st, (transformer ? 5184129024.0 : 7107425136.0) * batch);
}
BENCHMARK(BM_PaperStep)
    ->Name("PaperStep")
    ->ArgNames({"model", "batch"})
    ->Args({0, 32})
    ->Args({1, 8})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

// A training step of the lstm preset (model.embed_dim 32, model.lstm_hidden 64, two layers, the defaults)
// on 80-token sequences of an 80-symbol vocabulary with 80 classes (the next-character shape): forward,
// loss, backward, SGD. Its gates (logistic, tanh: nn/elementwise.hpp) and the softmax's exp are where
// the element-wise numerics cost time (docs/performance.md, "Element-wise numerics"). Args: batch.
void BM_LstmStep(benchmark::State& st) {
  const int batch = static_cast<int>(st.range(0)), seqLen = 80, vocab = 80;
  ModelConfig cfg;
  cfg.name = ModelPreset::Lstm;
  auto m = buildModel<float>(cfg, InputSpec{Shape{seqLen}, vocab, vocab});
  Rng init(0, -1, -1, Purpose::Init);
  m->initialize(init);
  m->reserve(batch);
  std::vector<float> x(static_cast<std::size_t>(seqLen) * batch);
  std::vector<std::int32_t> y(batch);
  Rng r(5, -1, -1, Purpose::Init);
  for (auto& t : x) t = static_cast<float>(r.below(vocab));
  for (auto& c : y) c = static_cast<std::int32_t>(r.below(vocab));
  PlainSgd sgd(0.01, 0.0, static_cast<std::size_t>(m->numParams()));
  m->lossAndGradient(x.data(), y.data(), batch);  // warm-up
  for (auto _ : st) {
    benchmark::DoNotOptimize(m->lossAndGradient(x.data(), y.data(), batch));
    sgd.step(m->params(), m->grads(), static_cast<std::size_t>(m->numParams()));
  }
  st.counters["samples/s"] = benchmark::Counter(batch, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_LstmStep)->Name("Step/lstm")->ArgNames({"batch"})->Arg(32)->Unit(benchmark::kMicrosecond);

// A training step as LocalTrainer runs plain SGD (Model::sgdStep) in fp32 and with train.precision = bf16,
// back to back. Args: model (as Step), batch, bf16 (0 or 1; an error where the CPU lacks it).
void BM_StepPrecision(benchmark::State& st) {
  static const char* const kNames[] = {"mlp", "cnn_mcmahan", "cnn_playerfl"};
  const int batch = static_cast<int>(st.range(1));
  const bool bf16 = st.range(2) != 0;
  if (bf16 && !bf16Missing().empty()) return st.SkipWithError(bf16Missing().c_str());
  ModelConfig cfg;
  cfg.name = parseEnum<ModelPreset>("model", kNames[st.range(0)]);
  selectBf16(bf16);
  auto m = buildModel<float>(cfg, InputSpec{Shape{1, 28, 28}, 10, 0});
  selectBf16(false);
  Rng init(0, -1, -1, Purpose::Init);
  m->initialize(init);
  m->reserve(batch);
  std::vector<float> x = randomFloats(784u * batch, 4, 0.0f, 1.0f);
  std::vector<std::int32_t> y(batch);
  for (int j = 0; j < batch; ++j) y[j] = j % 10;
  for (auto _ : st) benchmark::DoNotOptimize(m->sgdStep(x.data(), y.data(), batch, 1e-4f));
  st.counters["samples/s"] = benchmark::Counter(batch, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_StepPrecision)
    ->Name("StepPrecision")
    ->ArgNames({"model", "batch", "bf16"})
    ->Args({0, 32, 0})
    ->Args({0, 32, 1})
    ->Args({1, 32, 0})
    ->Args({1, 32, 1})
    ->Args({2, 128, 0})
    ->Args({2, 128, 1})
    ->Unit(benchmark::kMicrosecond);

// A synthetic FashionMNIST-shaped u8 dataset (contents do not matter for speed).
const Dataset& syntheticData() {
  static Dataset ds = [] {
    Dataset d;
    d.shape = Shape{1, 28, 28};
    d.numClasses = 10;
    const std::size_t n = 60000;
    d.u8.resize(n * 784);
    Rng r(3, -1, -1, Purpose::Init);
    for (auto& v : d.u8) v = static_cast<std::uint8_t>(r.below(256));
    d.labels.resize(n);
    for (std::size_t i = 0; i < n; ++i) d.labels[i] = static_cast<std::int32_t>(r.below(10));
    return d;
  }();
  return ds;
}

// W1's MLP (the default ModelConfig) on `data`, initialised from seed 0, with workspaces for batches
// of up to 1000 (the training batch and the evaluation batch of the benchmarks below).
std::unique_ptr<Model> w1Mlp(const Dataset& data) {
  auto m = buildModel<float>(ModelConfig{}, InputSpec{data.shape, 10, 0});
  Rng init(0, -1, -1, Purpose::Init);
  m->initialize(init);
  m->reserve(1000);
  return m;
}

// One local epoch of a W1 client (6,000 samples spread over the 60,000-sample pool, as a Dirichlet
// client's are): shuffle, gather (u8 -> float), step, SGD. Arg: samples.
void BM_LocalEpoch(benchmark::State& st) {
  const Dataset& data = syntheticData();
  const std::size_t n = static_cast<std::size_t>(st.range(0));
  IndexList idx(n);
  for (std::size_t i = 0; i < n; ++i) idx[i] = static_cast<Index>(i * (data.size() / static_cast<Index>(n)));
  auto m = w1Mlp(data);
  LocalTrainer trainer(data, 1000);
  TrainOptions opt;
  opt.optimizer.lr = 0.01;
  std::vector<float> start(m->params(), m->params() + m->numParams());
  int round = 0;
  long allocs = 0, steps = 0;
  for (auto _ : st) {
    m->setParams(start);
    Rng shuffle(0, 1, round++, Purpose::Shuffle);
    AllocCounter count;
    const TrainStats ts = trainer.train(*m, idx, opt, shuffle, 1, round);
    allocs += count.stop();
    steps += ts.steps;
  }
  st.counters["samples/s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  st.counters["mallocs/step"] = static_cast<double>(allocs) / static_cast<double>(std::max(1L, steps));
}
BENCHMARK(BM_LocalEpoch)->Name("LocalTrainer/epoch")->ArgName("samples")->Arg(6000)->Unit(benchmark::kMillisecond);

// Evaluation of 10,000 samples at batch 1000 (the W1 global test evaluation).
void BM_Eval(benchmark::State& st) {
  const Dataset& data = syntheticData();
  IndexList idx(10000);
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<Index>(i);
  auto m = w1Mlp(data);
  LocalTrainer trainer(data, 1000);
  for (auto _ : st) benchmark::DoNotOptimize(trainer.evaluate(*m, data, idx, 1000).correct);
  st.counters["samples/s"] = benchmark::Counter(10000.0, benchmark::Counter::kIsIterationInvariantRate);
  setFlops(st, 397600.0 * 10000.0);
}
BENCHMARK(BM_Eval)->Name("Eval/mlp_10k")->Unit(benchmark::kMillisecond);

}  // namespace
