#include "app/protocol_options.hpp"

#include "core/config.hpp"

namespace fedsilo {

// The client optimizer and the learning rate over rounds.
std::vector<Opt> optimizerOptions() {
  return {
      {"train.optimizer", "sgd", "client optimizer, torch.optim's update rules: " + joinNames<OptimizerKind>(" | ")},
      {"train.beta1", "0.9", "adam/adamw: first-moment decay in [0, 1)"},
      {"train.beta2", "0.999", "adam/adamw: second-moment decay in [0, 1)"},
      {"train.eps", "1e-8", "adam/adamw: denominator epsilon (>= 0)"},
      {"train.amsgrad", "false", "adam/adamw: normalise by the running maximum of the second moment (AMSGrad)"},
      {"train.nesterov", "false", "sgd: Nesterov momentum (needs train.momentum > 0)"},
      {"train.optimizer_state", "reset",
       "optimizer moments across rounds: " + joinNames<OptimizerStateMode>(" | ", true) +
           " (keep: one state per client and model, checkpointed)"},
      {"train.lr_schedule", "constant",
       "learning rate over rounds t: " + joinNames<LrSchedule>(" | ") +
           " (step: lr gamma^floor(t / lr_step_rounds); exponential: lr gamma^t; cosine: lr_min + (lr - lr_min) "
           "(1 + cos(pi t / rounds)) / 2)"},
      {"train.lr_step_rounds", "1", "step schedule: rounds between decays (>= 1)"},
      {"train.lr_gamma", "0.1", "step/exponential schedule: decay factor in (0, 1]"},
      {"train.lr_min", "0", "cosine schedule: the floor lr_min of the formula above (reached at t = rounds, one past the "
                            "last round, as PyTorch's CosineAnnealingLR), in [0, train.lr]"},
      {"train.precision", "fp32",
       "convolutions' and dense layers' products: " + joinNames<Precision>(" | ", true) +
           " (weights, optimizer and aggregation stay fp32; bf16 fails with exit 2 on a CPU without it)"},
  };
}

// The initial model.
std::vector<Opt> initOptions() {
  return {
      {"model.init_scheme", "pytorch_default",
       "dense/conv weight initialisation (torch.nn.init formulas, docs/models.md): " + joinNames<InitScheme>(" | ")},
      {"model.init_bias", "default", "bias initialisation: " + joinNames<BiasInit>(" | ") +
                                         " (default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) as PyTorch)"},
      {"model.init", "",
       "initial global model from a fedsilo results file (/model/global) or checkpoint (layer names and sizes "
       "checked; replaces model.init_scheme's draw)"},
  };
}

// What reaches the model's first layer: which samples, their scaling and augmentation.
std::vector<Opt> inputOptions() {
  return {
      {"data.limit", "0", "use only the first N training samples (file order; 0 = all); the test set stays whole"},
      {"data.normalize", "none",
       "input scaling (x - mean) / std per channel: " + joinNames<NormalizeKind>(" | ") +
           " (mean_std without data.mean/data.std: the clients' training samples' own statistics)"},
      {"data.mean", "", "data.normalize = mean_std: per-channel means (one value, or one per channel)"},
      {"data.std", "", "data.normalize = mean_std: per-channel standard deviations (> 0; as data.mean)"},
      {"data.augment", "none",
       "training-image augmentation: " + joinNames<AugmentKind>(" | ") +
           " (affine: random crop, flip, rotation, translation and scale as set below, one resampling)"},
      {"data.augment_rotation", "10", "data.augment: rotation angle ~ U(-deg, deg), in [0, 180]"},
      {"data.augment_translate", "0.1", "data.augment: shift ~ U(-t, t) of the side, in whole pixels; t in [0, 1)"},
      {"data.augment_scale", "1", "data.augment: zoom factor ~ U(min, max): 'min,max' or one value (> 0)"},
      {"data.augment_flip", "false", "data.augment: horizontal flip with probability 1/2"},
      {"data.augment_crop_padding", "0", "data.augment: random crop after zero padding by this many pixels (>= 0)"},
  };
}

}  // namespace fedsilo
