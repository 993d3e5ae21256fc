// LocalTrainer's data-parallel SGD (DataParallel): P "ranks" simulated by P threads, each with its
// own model and trainer, joined by an exact allreduce through shared memory. The trained model must
// be bit-identical for P = 1, 2 and 3 (dropout included), and, without dropout and with one shard
// per batch, equal to the plain serial loop up to the Fixed128 rounding of the gradient.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "fl/local_trainer.hpp"
#include "nn/presets.hpp"
#include "support/small_dataset.hpp"

namespace fedsilo {
namespace {

// The same features as 1 x 2 x 3 images (for augmentation).
Dataset makeImages(int n) {
  Dataset ds = test::separableDataset(n);
  ds.shape = Shape{1, 2, 3};
  return ds;
}

std::unique_ptr<Model> makeModel(double dropout, Shape shape = Shape{6, 1, 1}) {
  ModelConfig mc;
  mc.name = ModelPreset::Mlp;
  mc.hidden = {10};
  mc.dropout = dropout;
  auto m = buildModel<float>(mc, InputSpec{shape, 3, 0});
  m->reserve(8);
  Rng init(5, -1, -1, Purpose::Init);
  m->initialize(init);
  return m;
}

// Sums every thread's ExactSum into all of them (a shared-memory allreduce for P threads).
class ThreadAllreduce {
 public:
  explicit ThreadAllreduce(int p) : p_(p) {}
  void operator()(ExactSum& s) {
    std::unique_lock<std::mutex> lk(mu_);
    const long gen = gen_;
    if (arrived_ == 0) total_ = ExactSum(s.size());
    total_.merge(s);
    if (++arrived_ == p_) {
      arrived_ = 0;
      ++gen_;
      cv_.notify_all();
    } else {
      cv_.wait(lk, [&] { return gen_ != gen; });
    }
    s = total_;  // read before anyone of the next step arrives: all P are past the wait
    if (++left_ == p_) {
      left_ = 0;
      ++genOut_;
      cv_.notify_all();
    } else {
      const long g = genOut_;
      cv_.wait(lk, [&] { return genOut_ != g; });
    }
  }

 private:
  int p_, arrived_ = 0, left_ = 0;
  long gen_ = 0, genOut_ = 0;
  ExactSum total_;
  std::mutex mu_;
  std::condition_variable cv_;
};

TrainOptions options() {
  TrainOptions opt;
  opt.epochs = 3;
  opt.batch = 8;
  opt.optimizer.lr = 0.1;
  return opt;
}

IndexList allOf(const Dataset& ds) {
  IndexList idx;
  for (Index i = 0; i < ds.size(); ++i) idx.push_back(i);
  return idx;
}

// With `augment`: Adam (AMSGrad) instead of SGD and every training batch augmented.
std::vector<float> trainDataParallel(int ranks, int shard, double dropout, const Dataset& ds, bool augment = false) {
  TrainOptions opt = options();
  if (augment) {
    opt.optimizer.optimizer = OptimizerKind::Adam;
    opt.optimizer.amsgrad = true;
    opt.optimizer.lr = 0.01;
  }
  const IndexList idx = allOf(ds);
  ThreadAllreduce reduce(ranks);
  std::vector<std::vector<float>> out(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      auto m = makeModel(dropout, ds.shape);
      LocalTrainer tr(ds, 8);
      if (augment) {
        AugmentSettings a;
        a.rotation = 30;
        a.flip = true;
        a.cropPadding = 1;
        tr.setAugmenter(std::make_unique<Augmenter>(a, ds.shape, std::vector<float>{0.0f}, "test"), 3);
      }
      Rng shuffle(3, -1, 0, Purpose::Shuffle);
      DataParallel dp{r, ranks, shard, 3, [&](ExactSum& s) { reduce(s); }};
      tr.train(*m, idx, opt, shuffle, -1, 0, nullptr, &dp);
      out[r].assign(m->params(), m->params() + m->numParams());
    });
  for (auto& t : threads) t.join();
  for (int r = 1; r < ranks; ++r) EXPECT_EQ(out[r], out[0]) << "rank " << r << " holds another model";
  return out[0];
}

TEST(DataParallel, SameModelAtAnyRankCount) {
  const Dataset ds = test::separableDataset(61);  // 7 full batches and one of 5
  for (double dropout : {0.0, 0.3}) {
    const std::vector<float> one = trainDataParallel(1, 3, dropout, ds);
    EXPECT_EQ(trainDataParallel(2, 3, dropout, ds), one) << "2 ranks, dropout " << dropout;
    EXPECT_EQ(trainDataParallel(3, 3, dropout, ds), one) << "3 ranks, dropout " << dropout;
  }
}

// Augmentation is keyed by the sample's position in the run, never by the rank that computes it.
TEST(DataParallel, AugmentedAdamTrainingIsTheSameAtAnyRankCount) {
  const Dataset ds = makeImages(61);
  const std::vector<float> one = trainDataParallel(1, 3, 0.0, ds, true);
  EXPECT_EQ(trainDataParallel(2, 3, 0.0, ds, true), one);
  EXPECT_EQ(trainDataParallel(3, 3, 0.0, ds, true), one);
  EXPECT_NE(trainDataParallel(1, 3, 0.0, ds, false), one);
}

TEST(DataParallel, OneShardPerBatchIsTheSerialLoop) {
  const Dataset ds = test::separableDataset(61);
  const std::vector<float> dp = trainDataParallel(1, 8, 0.0, ds);
  auto m = makeModel(0.0);
  LocalTrainer tr(ds, 8);
  Rng shuffle(3, -1, 0, Purpose::Shuffle);
  tr.train(*m, allOf(ds), options(), shuffle, -1, 0);
  ASSERT_EQ(dp.size(), static_cast<std::size_t>(m->numParams()));
  double moved = 0.0;
  auto init = makeModel(0.0);
  for (std::size_t i = 0; i < dp.size(); ++i) {
    EXPECT_NEAR(dp[i], m->params()[i], 1e-6) << "parameter " << i;
    moved = std::max(moved, static_cast<double>(std::abs(dp[i] - init->params()[i])));
  }
  EXPECT_GT(moved, 1e-2);  // it did train
}

}  // namespace
}  // namespace fedsilo
