// Local training counted in optimizer steps (FedCompass's local steps, fl/local_trainer.hpp): the
// arithmetic of steps, epochs and samples, and the trainer stopping after exactly the steps asked for.
#include <gtest/gtest.h>

#include <vector>

#include "fl/local_trainer.hpp"
#include "nn/presets.hpp"
#include "support/small_dataset.hpp"

namespace fedsilo {
namespace {

TEST(LocalSteps, AnEpochIsOneStepPerBatchWithThePartialBatchKept) {
  EXPECT_EQ(stepsPerEpoch(80, 16), 5);
  EXPECT_EQ(stepsPerEpoch(81, 16), 6);
  EXPECT_EQ(stepsPerEpoch(10, 16), 1);
  EXPECT_EQ(stepsPerEpoch(0, 16), 0);
}

TEST(LocalSteps, StepsCoverWholeEpochsThenTheFirstBatchesOfTheNext) {
  EXPECT_EQ(samplesOfSteps(81, 16, 5), 80);
  EXPECT_EQ(samplesOfSteps(81, 16, 6), 81);       // the sixth step is the partial batch of 1
  EXPECT_EQ(samplesOfSteps(81, 16, 7), 81 + 16);  // then a fresh permutation
  EXPECT_EQ(samplesOfSteps(81, 16, 12), 2 * 81);
  EXPECT_EQ(samplesOfSteps(0, 16, 20), 0);
  EXPECT_EQ(epochsForSteps(81, 16, 6), 1);
  EXPECT_EQ(epochsForSteps(81, 16, 7), 2);
  EXPECT_EQ(epochsForSteps(81, 16, 100), 17);
  EXPECT_EQ(epochsForSteps(0, 16, 100), 1);
}

std::unique_ptr<Model> makeModel() {
  ModelConfig mc;
  mc.name = ModelPreset::Mlp;
  mc.hidden = {8};
  auto m = buildModel<float>(mc, InputSpec{Shape{6, 1, 1}, 3, 0});
  m->reserve(16);
  Rng init(5, -1, -1, Purpose::Init);
  m->initialize(init);
  return m;
}

IndexList firstIndices(Index n) {
  IndexList v;
  for (Index i = 0; i < n; ++i) v.push_back(i);
  return v;
}

// Trains `steps` steps the way the asynchronous driver runs a FedCompass job.
std::vector<float> trainSteps(const Dataset& data, Index n, int steps, TrainStats* stats) {
  auto model = makeModel();
  LocalTrainer trainer(data, 16);
  TrainOptions opt;
  opt.batch = 16;
  opt.optimizer.lr = 0.05;
  opt.epochs = epochsForSteps(n, opt.batch, steps);
  opt.maxSteps = steps;
  Rng shuffle(3, 1, 0, Purpose::Shuffle);
  *stats = trainer.train(*model, firstIndices(n), opt, shuffle, 1, 0);
  return std::vector<float>(model->params(), model->params() + model->numParams());
}

TEST(LocalSteps, TheTrainerRunsExactlyTheStepsAskedForOverTheSamplesTheyCover) {
  const Dataset data = test::separableDataset(81);
  for (int steps : {1, 5, 6, 7, 13, 20}) {
    TrainStats st;
    trainSteps(data, 81, steps, &st);
    EXPECT_EQ(st.steps, steps);
    EXPECT_EQ(st.samples, samplesOfSteps(81, 16, steps)) << steps << " steps";
  }
}

TEST(LocalSteps, WholeEpochsOfStepsAreThoseEpochsOfTraining) {
  const Dataset data = test::separableDataset(81);
  TrainStats st;
  const std::vector<float> bySteps = trainSteps(data, 81, 3 * 6, &st);
  auto model = makeModel();
  LocalTrainer trainer(data, 16);
  TrainOptions opt;
  opt.batch = 16;
  opt.optimizer.lr = 0.05;
  opt.epochs = 3;
  Rng shuffle(3, 1, 0, Purpose::Shuffle);
  trainer.train(*model, firstIndices(81), opt, shuffle, 1, 0);
  EXPECT_EQ(bySteps, std::vector<float>(model->params(), model->params() + model->numParams()));
}

}  // namespace
}  // namespace fedsilo
