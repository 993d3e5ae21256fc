// The client-protocol options (train.optimizer..., model.init*, data.normalize/limit/augment*): their
// defaults (which reproduce the earlier behaviour), their parsed values and their one-line errors.
#include <gtest/gtest.h>

#include "app/config_parser.hpp"
#include "core/error.hpp"
#include "support/parse_error.hpp"

namespace fedsilo {
namespace {

TEST(ClientProtocolOptions, DefaultsAreTheEarlierBehaviour) {
  const ExperimentConfig c = parseArguments({}).config;
  EXPECT_EQ(c.train.optimizer, OptimizerKind::Sgd);
  EXPECT_EQ(c.train.optimizerState, OptimizerStateMode::Reset);
  EXPECT_EQ(c.train.lrSchedule, LrSchedule::Constant);
  EXPECT_DOUBLE_EQ(c.train.beta1, 0.9);
  EXPECT_DOUBLE_EQ(c.train.beta2, 0.999);
  EXPECT_DOUBLE_EQ(c.train.eps, 1e-8);
  EXPECT_FALSE(c.train.amsgrad || c.train.nesterov);
  EXPECT_DOUBLE_EQ(c.train.weightDecay, 0.0);  // also for adamw: PyTorch's 0.01 is not implied
  EXPECT_EQ(c.model.initScheme, InitScheme::PytorchDefault);
  EXPECT_EQ(c.model.initBias, BiasInit::Default);
  EXPECT_TRUE(c.model.initFile.empty());
  EXPECT_EQ(c.data.normalize, NormalizeKind::None);
  EXPECT_EQ(c.data.augment, AugmentKind::None);
  EXPECT_EQ(c.data.limit, 0);
}

TEST(ClientProtocolOptions, ValuesArrive) {
  const ExperimentConfig c =
      parseArguments({"--train.optimizer", "adamw", "--train.beta1", "0.8", "--train.beta2", "0.99", "--train.eps",
                      "1e-6", "--train.amsgrad", "true", "--train.weight_decay", "0.01", "--train.optimizer_state",
                      "keep", "--train.lr_schedule", "step", "--train.lr_step_rounds", "30", "--train.lr_gamma", "0.5",
                      "--model.init_scheme", "kaiming_normal", "--model.init_bias", "zero", "--model.init", " m.h5 ",
                      "--data.limit", "10000", "--data.normalize", "mean_std", "--data.mean", "0.286", "--data.std",
                      "0.353", "--data.augment", "affine", "--data.augment_rotation", "15", "--data.augment_translate",
                      "0.2", "--data.augment_scale", "0.9,1.1", "--data.augment_flip", "true",
                      "--data.augment_crop_padding", "4"})
          .config;
  EXPECT_EQ(c.train.optimizer, OptimizerKind::AdamW);
  EXPECT_DOUBLE_EQ(c.train.beta1, 0.8);
  EXPECT_DOUBLE_EQ(c.train.beta2, 0.99);
  EXPECT_DOUBLE_EQ(c.train.eps, 1e-6);
  EXPECT_TRUE(c.train.amsgrad);
  EXPECT_EQ(c.train.optimizerState, OptimizerStateMode::Keep);
  EXPECT_EQ(c.train.lrSchedule, LrSchedule::Step);
  EXPECT_EQ(c.train.lrStepRounds, 30);
  EXPECT_DOUBLE_EQ(c.train.lrGamma, 0.5);
  EXPECT_EQ(c.model.initScheme, InitScheme::KaimingNormal);
  EXPECT_EQ(c.model.initBias, BiasInit::Zero);
  EXPECT_EQ(c.model.initFile, "m.h5");
  EXPECT_EQ(c.data.limit, 10000);
  EXPECT_EQ(c.data.mean, (std::vector<double>{0.286}));
  EXPECT_EQ(c.data.std, (std::vector<double>{0.353}));
  EXPECT_EQ(c.data.augment, AugmentKind::Affine);
  EXPECT_DOUBLE_EQ(c.data.augmentRotation, 15);
  EXPECT_DOUBLE_EQ(c.data.augmentTranslate, 0.2);
  EXPECT_DOUBLE_EQ(c.data.augmentScaleMin, 0.9);
  EXPECT_DOUBLE_EQ(c.data.augmentScaleMax, 1.1);
  EXPECT_TRUE(c.data.augmentFlip);
  EXPECT_EQ(c.data.augmentCropPadding, 4);
}

TEST(ClientProtocolOptions, ErrorsNameTheValueAndTheExpectedForm) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"--train.optimizer", "rmsprop"}, "train.optimizer = rmsprop: expected one of sgd, adam, adamw"},
      {{"--train.nesterov", "true"}, "train.nesterov = true needs train.momentum > 0"},
      {{"--train.optimizer", "adam", "--train.momentum", "0.9"},
       "train.momentum = 0.9 applies to train.optimizer = sgd"},
      {{"--train.beta1", "1"}, "train.beta1 = 1: expected a number in [0, 1)"},
      {{"--train.optimizer_state", "sometimes"}, "train.optimizer_state = sometimes: expected one of reset, keep"},
      {{"--train.lr_schedule", "cosine", "--train.lr_min", "0.5"},
       "train.lr_min = 0.5: expected a number in [0, train.lr = 0.05]"},
      {{"--train.lr_gamma", "0"}, "train.lr_gamma = 0: expected a number in (0, 1]"},
      {{"--model.init_scheme", "he"}, "model.init_scheme = he: expected one of pytorch_default, kaiming_normal"},
      {{"--data.normalize", "mean_std", "--data.std", "0.3"}, "data.std = 0.3: data.mean and data.std go together"},
      {{"--data.mean", "0.3", "--data.std", "0.3"}, "data.mean = 0.3: applies with data.normalize = mean_std only"},
      {{"--data.normalize", "mean_std", "--data.mean", "0.3", "--data.std", "0"},
       "data.std = 0: expected finite numbers > 0"},
      {{"--data.augment", "mixup"}, "data.augment = mixup: expected one of none, affine"},
      {{"--data.augment_scale", "1.2,0.8"}, "data.augment_scale = 1.2,0.8: expected one factor or min,max"},
      {{"--data.limit", "-1"}, "data.limit = -1: expected an integer in [0,"},
      {{"--algorithm", "pfedme", "--train.optimizer", "adam"},
       "algorithm = pfedme: train.optimizer = adam does not apply"},
      {{"--privacy.level", "sample", "--privacy.noise_multiplier", "1", "--data.augment", "affine"},
       "data.augment = affine: not with privacy.level = sample"},
      {{"--algorithm", "fedfa", "--train.optimizer", "adam"}, "fedfa.client_momentum = 0.5 is SGD momentum"},
  };
  for (const auto& [args, text] : cases) {
    const std::string error = test::parseError(args);
    EXPECT_NE(error.find(text), std::string::npos) << error;
  }
}

// A schedule's or augmentation's option changed where it has no effect is refused, naming it and the
// setting it needs; at its default (as text or the same number) it passes.
TEST(ClientProtocolOptions, OptionsWithoutEffectAreRefused) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"--train.lr_gamma", "0.5"}, "train.lr_gamma = 0.5: applies with train.lr_schedule = step or exponential only"},
      {{"--train.lr_schedule", "cosine", "--train.lr_gamma", "0.5"}, "train.lr_gamma = 0.5: applies with"},
      {{"--train.lr_schedule", "exponential", "--train.lr_step_rounds", "5"},
       "train.lr_step_rounds = 5: applies with train.lr_schedule = step only"},
      {{"--train.lr_schedule", "step", "--train.lr_min", "0.01"},
       "train.lr_min = 0.01: applies with train.lr_schedule = cosine only"},
      {{"--data.augment_rotation", "30"}, "data.augment_rotation = 30: applies with data.augment = affine only"},
      {{"--data.augment_translate", "0.2"}, "data.augment_translate = 0.2: applies with data.augment = affine"},
      {{"--data.augment_scale", "0.9,1.1"}, "data.augment_scale = 0.9,1.1: applies with data.augment = affine"},
      {{"--data.augment_flip", "true"}, "data.augment_flip = true: applies with data.augment = affine"},
      {{"--data.augment_crop_padding", "2"}, "data.augment_crop_padding = 2: applies with data.augment = affine"},
  };
  for (const auto& [args, text] : cases) {
    const std::string error = test::parseError(args);
    EXPECT_NE(error.find(text), std::string::npos) << args[0] << " " << args[1] << ": got '" << error << "'";
  }
  for (const std::vector<std::string>& fine :
       {std::vector<std::string>{"--train.lr_gamma", "0.10", "--train.lr_step_rounds", "1", "--train.lr_min", "0"},
        {"--train.lr_schedule", "exponential", "--train.lr_gamma", "0.5"},
        {"--train.lr_schedule", "step", "--train.lr_step_rounds", "5", "--train.lr_gamma", "0.5"},
        {"--data.augment_rotation", "10", "--data.augment_scale", "1", "--data.augment_flip", "false"}})
    EXPECT_EQ(test::parseError(fine), "") << fine[0] << " " << fine[1];
}

}  // namespace
}  // namespace fedsilo
