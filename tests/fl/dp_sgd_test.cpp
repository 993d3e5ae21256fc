// DP-SGD in the training loop (fl/dp_sgd.hpp): Poisson batches, and one step of LocalTrainer::train
// with a PrivateSgd set against the formula g = (sum_i clip(g_i) + N(0, z^2 C^2)) / (q n), formed
// here from single-sample gradients, the same keyed batch and the same keyed noise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "fl/local_trainer.hpp"
#include "nn/presets.hpp"
#include "privacy/gaussian_f32.hpp"
#include "support/small_dataset.hpp"

namespace fedsilo {
namespace {

std::unique_ptr<Model> makeModel(int reserve) {
  ModelConfig mc;
  mc.name = ModelPreset::Mlp;
  mc.hidden = {10};
  auto m = buildModel<float>(mc, InputSpec{Shape{6, 1, 1}, 3, 0});
  m->reserve(reserve);
  Rng init(5, -1, -1, Purpose::Init);
  m->initialize(init);
  return m;
}

IndexList range(Index from, Index to) {
  IndexList v;
  for (Index i = from; i < to; ++i) v.push_back(i);
  return v;
}

PrivateSgd settings(RdpAccountant* accountant) {
  PrivateSgd p;
  p.clip = 0.3;
  p.noiseMultiplier = 1.1;
  p.seed = 7;
  p.client = 2;
  p.round = 4;
  p.accountant = accountant;
  return p;
}

TEST(PoissonBatch, IsAKeyedSubsetInIndexOrderOfTheExpectedSize) {
  const IndexList idx = range(100, 1100);  // n = 1000
  PrivateSgd p = settings(nullptr);
  IndexList a, b;
  double total = 0.0;
  const int steps = 2000;
  for (p.steps = 0; p.steps < steps; ++p.steps) {
    poissonBatch(idx, 0.05, p, a);
    poissonBatch(idx, 0.05, p, b);
    ASSERT_EQ(a, b) << "the same key draws the same batch";
    ASSERT_TRUE(std::is_sorted(a.begin(), a.end()));
    ASSERT_TRUE(std::adjacent_find(a.begin(), a.end()) == a.end());
    for (Index i : a) ASSERT_TRUE(i >= 100 && i < 1100);
    total += static_cast<double>(a.size());
  }
  // Mean of 2000 Binomial(1000, 0.05) sizes: 50 +- 0.15 (one standard error).
  EXPECT_NEAR(total / steps, 50.0, 1.0);
  p.steps = 0;
  poissonBatch(idx, 0.05, p, a);
  p.steps = 1;
  poissonBatch(idx, 0.05, p, b);
  EXPECT_NE(a, b) << "each step has its own batch";
  poissonBatch(idx, 1.0, p, a);
  EXPECT_EQ(a, idx);
  poissonBatch(idx, 0.0, p, a);
  EXPECT_TRUE(a.empty());
}

TEST(PoissonBatch, EveryRecordIsSampledWithProbabilityQ) {
  const IndexList idx = range(0, 20);
  PrivateSgd p = settings(nullptr);
  std::vector<int> hits(20, 0);
  IndexList batch;
  const int steps = 20000;
  for (p.steps = 0; p.steps < steps; ++p.steps) {
    poissonBatch(idx, 0.3, p, batch);
    for (Index i : batch) ++hits[static_cast<std::size_t>(i)];
  }
  // Binomial(20000, 0.3): standard deviation 65; the first and the last records alike (no edge bias).
  for (int h : hits) EXPECT_NEAR(h, 6000, 300);
}

TEST(DpSgd, OneStepIsTheNoisedSumOfClippedPerSampleGradientsOverTheExpectedBatch) {
  const Dataset data = test::separableDataset(40);
  const IndexList idx = range(0, 40);
  auto model = makeModel(64);
  const std::vector<float> start(model->params(), model->params() + model->numParams());
  const std::size_t P = start.size();
  TrainOptions opt;
  opt.epochs = 1;
  opt.batch = 10;  // q = 10 / 40
  opt.optimizer.lr = 1.0;
  opt.maxSteps = 1;
  // The expected gradient, from the pieces.
  RdpAccountant expectedAccountant;
  PrivateSgd p = settings(nullptr);
  IndexList batch;
  poissonBatch(idx, 0.25, p, batch);
  ASSERT_GT(batch.size(), 1u);
  LocalTrainer trainer(data, 64);
  std::vector<double> sum(P, 0.0);
  for (Index i : batch) {
    const float* x = trainer.gatherBatch(data, &i, 1);
    const std::int32_t* y = trainer.gatherLabels(data, &i, 1);
    model->lossAndGradient(x, y, 1);
    double n2 = 0.0;
    for (std::size_t k = 0; k < P; ++k) n2 += static_cast<double>(model->grads()[k]) * model->grads()[k];
    const double factor = std::min(1.0, p.clip / std::sqrt(n2));
    for (std::size_t k = 0; k < P; ++k) sum[k] += factor * model->grads()[k];
  }
  std::vector<float> noise(P, 0.0f);
  Rng noiseRng = privateSgdNoiseRng(p);
  addScaledNormalsF32(noise.data(), P, static_cast<float>(p.noiseMultiplier * p.clip), noiseRng);
  // One step of the training loop with DP-SGD on, lr 1: params = start - g.
  RdpAccountant accountant;
  PrivateSgd run = settings(&accountant);
  trainer.setPrivateSgd(&run);
  Rng shuffle(1, 2, 3, Purpose::Shuffle);
  const TrainStats st = trainer.train(*model, idx, opt, shuffle, run.client, run.round);
  trainer.setPrivateSgd(nullptr);
  EXPECT_EQ(st.steps, 1);
  EXPECT_EQ(run.steps, 1);
  for (std::size_t k = 0; k < P; ++k) {
    const double g = (sum[k] + noise[k]) / 10.0;
    EXPECT_NEAR(model->params()[k], start[k] - g, 1e-5) << "parameter " << k;
  }
  expectedAccountant.compose(0.25, p.noiseMultiplier, 1);
  EXPECT_EQ(accountant.rdp(), expectedAccountant.rdp());
}

TEST(DpSgd, AnEpochIsCeilNOverBatchStepsEachComposed) {
  const Dataset data = test::separableDataset(45);
  auto model = makeModel(64);
  TrainOptions opt;
  opt.epochs = 2;
  opt.batch = 10;
  opt.optimizer.lr = 0.1;
  RdpAccountant accountant;
  PrivateSgd run = settings(&accountant);
  LocalTrainer trainer(data, 64);
  trainer.setPrivateSgd(&run);
  Rng shuffle(1, 2, 3, Purpose::Shuffle);
  const TrainStats st = trainer.train(*model, range(0, 45), opt, shuffle, run.client, run.round);
  EXPECT_EQ(st.steps, 10);  // 2 epochs x ceil(45 / 10)
  EXPECT_EQ(run.steps, 10);
  RdpAccountant expected;
  expected.compose(10.0 / 45.0, run.noiseMultiplier, 10);
  for (std::size_t i = 0; i < expected.rdp().size(); ++i) EXPECT_NEAR(accountant.rdp()[i], expected.rdp()[i], 1e-12);
}

TEST(DpSgd, ABatchLargerThanTheReservedOneIsSummedInChunks) {
  // batch 4 of 11 records: q = 4/11, and Poisson batches of more than 4 samples are processed in
  // chunks by a trainer and model reserved for 4; they must train as one reserved for 16.
  const Dataset data = test::separableDataset(11);
  auto small = makeModel(4), large = makeModel(16);
  TrainOptions opt;
  opt.epochs = 3;  // 9 steps
  opt.batch = 4;
  opt.optimizer.lr = 0.5;
  PrivateSgd a = settings(nullptr), b = settings(nullptr);
  std::size_t largest = 0;
  IndexList batch;
  for (a.steps = 0; a.steps < 9; ++a.steps) {
    poissonBatch(range(0, 11), 4.0 / 11.0, a, batch);
    largest = std::max(largest, batch.size());
  }
  ASSERT_GT(largest, 4u) << "no step exceeds the reserved batch: the test would prove nothing";
  a.steps = 0;
  LocalTrainer chunked(data, 4), whole(data, 16);
  chunked.setPrivateSgd(&a);
  whole.setPrivateSgd(&b);
  Rng s1(1, 2, 3, Purpose::Shuffle), s2(1, 2, 3, Purpose::Shuffle);
  chunked.train(*small, range(0, 11), opt, s1, a.client, a.round);
  whole.train(*large, range(0, 11), opt, s2, b.client, b.round);
  for (Index k = 0; k < small->numParams(); ++k) EXPECT_NEAR(small->params()[k], large->params()[k], 1e-5);
}

}  // namespace
}  // namespace fedsilo
