// Optimizer steps and augmentation (bench_main.cpp: the groups Sgd/, Adam/, Augment/).
#include <chrono>
#include <vector>

#include "bench_common.hpp"
#ifdef FEDSILO_BENCH_OPTIMIZER
#include "data/augment.hpp"
#include "nn/model.hpp"
#include "nn/presets.hpp"
#endif

namespace {

using namespace fedsilo;
using namespace fedsilo::bench;

void BM_Sgd(benchmark::State& st) {
  const std::size_t n = static_cast<std::size_t>(st.range(0));
  const bool momentum = st.range(1) != 0;
  std::vector<float> p = randomFloats(n, 1), g = randomFloats(n, 2);
  PlainSgd sgd(0.01, momentum ? 0.9 : 0.0, n);
  for (auto _ : st) {
    sgd.step(p.data(), g.data(), n);
    benchmark::ClobberMemory();
  }
  setBytes(st, (momentum ? 5.0 : 3.0) * 4.0 * static_cast<double>(n));  // p, g read, p written (+ v r/w)
}
BENCHMARK(BM_Sgd)->Name("Sgd/step")->ArgNames({"params", "momentum"})->Args({199210, 0})->Args({1663370, 0})->Args({199210, 1});

#ifdef FEDSILO_BENCH_OPTIMIZER
OptimizerSettings adamSettings() {
  OptimizerSettings s;
  s.optimizer = OptimizerKind::Adam;
  s.lr = 1e-3;
  s.weightDecay = 1e-4;
  s.amsgrad = true;
  return s;
}

// Adam with AMSGrad and L2 weight decay. Bytes: p, m, v, vmax read and written, g read.
void BM_Adam(benchmark::State& st) {
  const std::size_t n = static_cast<std::size_t>(st.range(0));
  std::vector<float> p = randomFloats(n, 1), g = randomFloats(n, 2);
  const Optimizer adam(adamSettings());
  OptimizerState state;
  adam.prepare(state, n, 1);
  const std::vector<ParamSegment> all{{0, n, 0}};
  for (auto _ : st) {
    adam.step(p.data(), g.data(), all, state);
    benchmark::ClobberMemory();
  }
  setBytes(st, 9.0 * 4.0 * static_cast<double>(n));
}
BENCHMARK(BM_Adam)->Name("Adam/step")->ArgNames({"params"})->Args({199210})->Args({1663370});

// Augmentation of a batch of 128 images (rotation, translation, scale, flip and crop all on), keyed
// per sample as LocalTrainer keys it, timed per batch; then the counter aug/step is that time over the
// time of one training step (lossAndGradient + Adam step) of the model at batch 128, measured in the
// same run. model: 0 = cnn_mcmahan (W2), 1 = cnn_playerfl.
void BM_AugmentVsStep(benchmark::State& st) {
  const int batch = 128;
  const Shape shape{1, 28, 28};
  AugmentSettings a;
  a.rotation = 10;
  a.translate = 0.1;
  a.scaleMin = 0.9;
  a.scaleMax = 1.1;
  a.flip = true;
  a.cropPadding = 2;
  Augmenter augmenter(a, shape, {0.0f}, "bench");
  std::vector<float> x = randomFloats(784u * batch, 4, 0.0f, 1.0f);
  std::uint64_t position = 0;
  const auto augmentBatch = [&] {
    for (int j = 0; j < batch; ++j, ++position) {
      Rng rng(1, 3, 5, Purpose::Augment, mix64(position));
      augmenter.apply(augmenter.draw(rng), x.data() + static_cast<std::size_t>(j) * 784);
    }
  };
  double augmentSeconds = 0.0;
  for (auto _ : st) {
    const auto t0 = std::chrono::steady_clock::now();
    augmentBatch();
    augmentSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    benchmark::ClobberMemory();
  }
  ModelConfig cfg;
  cfg.name = st.range(0) == 0 ? ModelPreset::CnnMcMahan : ModelPreset::CnnPlayerFl;
  auto m = buildModel<float>(cfg, InputSpec{shape, 10, 0});
  Rng init(0, -1, -1, Purpose::Init);
  m->initialize(init);
  m->reserve(batch);
  std::vector<std::int32_t> y(batch);
  for (int j = 0; j < batch; ++j) y[j] = j % 10;
  const Optimizer adam(adamSettings());
  OptimizerState state;
  const std::size_t P = static_cast<std::size_t>(m->numParams());
  adam.prepare(state, P, 1);
  const std::vector<ParamSegment> all{{0, P, 0}};
  m->lossAndGradient(x.data(), y.data(), batch);  // warm-up
  const int steps = 3;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) {
    benchmark::DoNotOptimize(m->lossAndGradient(x.data(), y.data(), batch));
    adam.step(m->params(), m->grads(), all, state);
  }
  const double stepSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / steps;
  const double perBatch = augmentSeconds / static_cast<double>(st.iterations());
  st.counters["aug_ms"] = perBatch * 1e3;
  st.counters["step_ms"] = stepSeconds * 1e3;
  st.counters["aug/step"] = perBatch / stepSeconds;
}
BENCHMARK(BM_AugmentVsStep)
    ->Name("Augment/batch128")
    ->ArgNames({"playerfl"})
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond);
#endif

}  // namespace
