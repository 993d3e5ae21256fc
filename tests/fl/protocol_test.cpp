// The client training protocol through LocalTrainer and the round driver: frozen ranges under every
// optimizer, persistent optimizer state (train.optimizer_state), augmentation in the training
// batches only, and the round's learning rate (train.lr_schedule).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "app/config_parser.hpp"
#include "comm/communicator.hpp"
#include "fl/experiment.hpp"
#include "fl/gradient_hooks.hpp"
#include "fl/local_trainer.hpp"
#include "nn/presets.hpp"
#include "support/null_sink.hpp"

namespace fedsilo {
namespace {

// 40 images of 1 x 6 x 6, label = the brighter half (left or right).
Dataset imageData() {
  Dataset ds;
  ds.shape = Shape{1, 6, 6};
  ds.numClasses = 2;
  Rng gen(4, -1, -1, Purpose::Misc);
  for (int i = 0; i < 40; ++i) {
    const int y = i % 2;
    for (int r = 0; r < 6; ++r)
      for (int c = 0; c < 6; ++c)
        ds.u8.push_back(static_cast<std::uint8_t>(((c < 3) == (y == 0) ? 150 : 30) + gen.below(60)));
    ds.labels.push_back(y);
  }
  return ds;
}

std::unique_ptr<Model> mlp() {
  ModelConfig mc;
  mc.hidden = {8};
  auto m = buildModel<float>(mc, InputSpec{Shape{1, 6, 6}, 2, 0});
  m->reserve(8);
  Rng init(5, -1, -1, Purpose::Init);
  m->initialize(init);
  return m;
}

IndexList allOf(const Dataset& ds) {
  IndexList idx;
  for (Index i = 0; i < ds.size(); ++i) idx.push_back(i);
  return idx;
}

TrainOptions adamW() {
  TrainOptions o;
  o.epochs = 2;
  o.batch = 8;
  o.optimizer.lr = 0.01;
  o.optimizer.optimizer = OptimizerKind::AdamW;
  o.optimizer.weightDecay = 0.1;
  return o;
}

std::vector<float> paramsOf(const Model& m) { return std::vector<float>(m.params(), m.params() + m.numParams()); }

std::vector<float> trainOnce(const Dataset& ds, const TrainOptions& o, const GradientHook* hook = nullptr,
                             std::unique_ptr<Augmenter> augmenter = nullptr) {
  auto m = mlp();
  LocalTrainer tr(ds, 8);
  if (augmenter) tr.setAugmenter(std::move(augmenter), 9);
  Rng shuffle(3, 1, 0, Purpose::Shuffle);
  tr.train(*m, allOf(ds), o, shuffle, 1, 0, hook);
  return paramsOf(*m);
}

// FedBABU's frozen head: the parameters outside the range do not move under AdamW's decoupled decay
// nor under Adam's kept moments, and their optimizer state stays untouched.
TEST(TrainerProtocol, FrozenRangeHoldsUnderEveryOptimizer) {
  const Dataset ds = imageData();
  auto m = mlp();
  const std::vector<float> start = paramsOf(*m);
  const LayerBlock& head = m->blocks().back();
  const auto headBegin = static_cast<std::size_t>(head.offset);
  const GradientHook freeze = freezeOutsideHook(0, headBegin, 0.1);
  for (OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::Adam, OptimizerKind::AdamW}) {
    TrainOptions o = adamW();
    o.optimizer.optimizer = kind;
    OptimizerState state;
    o.state = &state;
    const std::vector<float> p = trainOnce(ds, o, &freeze);
    EXPECT_EQ(std::memcmp(p.data() + headBegin, start.data() + headBegin, head.size * sizeof(float)), 0)
        << nameOf(kind);
    EXPECT_NE(std::memcmp(p.data(), start.data(), headBegin * sizeof(float)), 0) << nameOf(kind) << ": body trained";
    if (kind != OptimizerKind::Sgd) {
      EXPECT_EQ(state.steps.front(), 10);  // 40 samples / 8 x 2 epochs
      EXPECT_EQ(state.steps.back(), 0);    // the head's bias: never stepped
      EXPECT_EQ(state.first[state.first.size() - 1], 0.0f);
    }
  }
}

TEST(TrainerProtocol, PersistentStateContinuesFreshStateRestarts) {
  const Dataset ds = imageData();
  TrainOptions o = adamW();
  o.optimizer.optimizer = OptimizerKind::Adam;
  o.optimizer.weightDecay = 0.0;
  EXPECT_EQ(trainOnce(ds, o), trainOnce(ds, o));  // nullptr: each run starts from zero moments
  const TrainOptions fresh = o;
  OptimizerState kept;
  o.state = &kept;
  const std::vector<float> first = trainOnce(ds, o);
  EXPECT_EQ(first, trainOnce(ds, fresh));  // a new state behaves as a fresh one
  EXPECT_EQ(kept.steps.front(), 10);
  const std::vector<float> second = trainOnce(ds, o);  // same start, same batches, but continued moments
  EXPECT_NE(second, first);
  EXPECT_EQ(kept.steps.front(), 20);
}

TEST(TrainerProtocol, AugmentationChangesTrainingBatchesOnlyAndIsKeyed) {
  const Dataset ds = imageData();
  TrainOptions o = adamW();
  const auto augmenter = [] {
    AugmentSettings s;
    s.rotation = 20;
    s.translate = 0.2;
    s.flip = true;
    return std::make_unique<Augmenter>(s, Shape{1, 6, 6}, std::vector<float>{0.0f}, "test");
  };
  const std::vector<float> plain = trainOnce(ds, o), a = trainOnce(ds, o, nullptr, augmenter());
  EXPECT_NE(a, plain);
  EXPECT_EQ(trainOnce(ds, o, nullptr, augmenter()), a);
  // Evaluation never augments.
  auto m = mlp();
  m->reserve(40);
  LocalTrainer with(ds, 40), without(ds, 40);
  with.setAugmenter(augmenter(), 9);
  const EvalStats e1 = with.evaluate(*m, ds, allOf(ds), 40), e2 = without.evaluate(*m, ds, allOf(ds), 40);
  EXPECT_EQ(e1.lossSum, e2.lossSum);
  EXPECT_EQ(e1.correct, e2.correct);
}

// ---- through the round driver --------------------------------------------------------------------
ExperimentConfig config(std::vector<std::string> extra) {
  std::vector<std::string> args{"--dataset", "fashion_mnist", "--model.hidden", "16", "--clients", "4", "--seed", "3",
                                "--partition.samples_per_client", "60", "--train.batch", "20", "--output",
                                "/tmp/unused.h5"};
  args.insert(args.end(), extra.begin(), extra.end());
  return parseArguments(args).config;
}

struct SmallRun {
  ExperimentConfig cfg;
  Communicator comm = Communicator::single();
  std::unique_ptr<Experiment> exp;
  explicit SmallRun(ExperimentConfig c) : cfg(std::move(c)) {
    exp = std::make_unique<Experiment>(cfg, comm);
    test::NullSink sink;
    exp->run(sink);
  }
};

// Adam at `rounds` rounds with train.optimizer_state = `state`, and `extra`.
ExperimentConfig adamConfig(int rounds, const std::string& state, std::vector<std::string> extra = {}) {
  extra.insert(extra.end(), {"--train.optimizer", "adam", "--train.lr", "0.002", "--rounds", std::to_string(rounds),
                             "--train.optimizer_state", state});
  return config(extra);
}

TEST(DriverProtocol, KeepStoresOneStatePerClientAndModel) {
  SmallRun reset(adamConfig(2, "reset"));
  EXPECT_EQ(reset.exp->driver().optimizerStates().size(), 0u);
  SmallRun kept(adamConfig(2, "keep"));
  const OptimizerStateStore& store = kept.exp->driver().optimizerStates();
  EXPECT_EQ(store.size(), 4u);
  for (int k = 0; k < 4; ++k) {
    ASSERT_NE(store.find(k, ModelRole::Shared), nullptr);
    EXPECT_EQ(store.find(k, ModelRole::Shared)->steps.front(), 2 * 3);  // 2 rounds x (48 samples / 20) batches
  }
  EXPECT_NE(kept.exp->global(), reset.exp->global());
  // One round: nothing carried over yet, the same model.
  EXPECT_EQ(SmallRun(adamConfig(1, "keep")).exp->global(), SmallRun(adamConfig(1, "reset")).exp->global());
  // Ditto: its personal model has its own state.
  SmallRun d(adamConfig(2, "keep", {"--algorithm", "ditto"}));
  EXPECT_EQ(d.exp->driver().optimizerStates().size(), 8u);
  EXPECT_NE(d.exp->driver().optimizerStates().find(2, ModelRole::Personal), nullptr);
}

TEST(DriverProtocol, TheRoundsLearningRateReachesTheClients) {
  // step schedule with gamma 1e-12: round 0 trains at train.lr, later rounds barely move the model.
  const auto globalAfter = [](int rounds, bool decayed) {
    std::vector<std::string> a{"--rounds", std::to_string(rounds)};
    if (decayed) a.insert(a.end(), {"--train.lr_schedule", "step", "--train.lr_gamma", "1e-12"});
    return SmallRun(config(a)).exp->global();
  };
  const auto maxDiff = [](const std::vector<float>& x, const std::vector<float>& y) {
    double d = 0;
    for (std::size_t i = 0; i < x.size(); ++i) d = std::max(d, static_cast<double>(std::fabs(x[i] - y[i])));
    return d;
  };
  EXPECT_EQ(globalAfter(1, true), globalAfter(1, false));
  EXPECT_LT(maxDiff(globalAfter(3, true), globalAfter(1, true)), 1e-9);
  EXPECT_GT(maxDiff(globalAfter(3, false), globalAfter(1, false)), 1e-3);
}

}  // namespace
}  // namespace fedsilo
