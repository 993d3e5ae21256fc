#include "fl/algorithms/pfedme.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "fl/aggregation.hpp"
#include "fl/gradient_hooks.hpp"

namespace fedsilo {

PFedMeOptions PFedMeOptions::parse(const OptionValues& o) {
  PFedMeOptions p;
  p.lambda = o.getDouble("pfedme.lambda", 0.0, 1e6);
  p.innerSteps = static_cast<int>(o.getInt("pfedme.inner_steps", 1, 100000));
  p.personalLr = o.getDouble("pfedme.personal_lr", 0.0, 1e6);
  if (!(p.personalLr > 0.0))
    throw ConfigError(fmt("pfedme.personal_lr = ", o.raw("pfedme.personal_lr"), ": expected a number > 0"));
  p.beta = o.getDouble("pfedme.beta", 0.0, 1e6);
  if (!(p.beta > 0.0)) throw ConfigError(fmt("pfedme.beta = ", o.raw("pfedme.beta"), ": expected a number > 0"));
  return p;
}

double PFedMe::innerSteps(ClientContext& c, TrainOptions& inner, const GradientHook& hook, Rng& rng) {
  if (!c.fl.cfg.privacy.sampleLevel()) {
    inner.batch = static_cast<int>(batch_.size());
    return c.trainer.train(c.model, batch_, inner, rng, c.client.id, c.round, &hook).meanLoss;
  }
  // DP-SGD: the K steps run on the whole training set, where each draws its own Poisson batch at
  // q = batch / n_k, so every inner step is one sampled Gaussian step for the accountant.
  inner.batch = c.train.batch;
  inner.maxSteps = opt_.innerSteps;
  return c.trainer.train(c.model, c.client.train, inner, rng, c.client.id, c.round, &hook).meanLoss;
}

void PFedMe::clientUpdate(ClientContext& c, ClientUpdate& out) {
  const std::size_t P = static_cast<std::size_t>(c.model.numParams());
  float* theta = c.model.params();  // holds w^t on entry: theta starts from the global model
  local_.assign(c.global.begin(), c.global.end());
  const TrainOptions outer = c.trainOptions();
  TrainOptions inner = outer;
  inner.optimizer.lr = opt_.personalLr;
  inner.epochs = opt_.innerSteps;  // K epochs over a one-batch index list = K steps on that batch
  inner.optimizer.momentum = 0.0;  // the authors' pFedMeOptimizer: plain gradient steps on the inner problem
  inner.optimizer.nesterov = false;
  inner.state = nullptr;           // (plain steps keep no state)
  const GradientHook hook = proximalHook(opt_.lambda, local_.data());  // + lambda (theta - w_{k,r})
  const float step = static_cast<float>(outer.optimizer.lr * opt_.lambda);
  Rng rng = c.shuffleRng();
  const std::size_t n = c.client.train.size(), B = static_cast<std::size_t>(outer.batch);
  double lossSum = 0.0;
  long steps = 0;
  for (int e = 0; e < outer.epochs; ++e) {
    // Batches of a fresh permutation per epoch (as the shared loop does for FedAvg).
    order_.assign(c.client.train.begin(), c.client.train.end());
    rng.shuffle(order_);
    for (std::size_t b = 0; b < n; b += B) {
      batch_.assign(order_.begin() + static_cast<std::ptrdiff_t>(b),
                    order_.begin() + static_cast<std::ptrdiff_t>(std::min(n, b + B)));
      lossSum += innerSteps(c, inner, hook, rng);
      ++steps;
      for (std::size_t i = 0; i < P; ++i)
        local_[i] -= step * (local_[i] - theta[i]);  // w <- w - eta lambda (w - theta^)
    }
  }
  out.trainLoss = steps > 0 ? lossSum / static_cast<double>(steps) : 0.0;
  personal_.put(c.client.id, theta, P);
  // Send w_{k,R}; the model leaves holding it.
  std::memcpy(theta, local_.data(), P * sizeof(float));
  out.blockWeight.assign(c.fl.blocks.size(), static_cast<double>(c.client.numTrain()));
  out.vector = theta;
}

void PFedMe::serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  if (opt_.beta == 1.0)
    applyWeightedMean(in, ctx.blocks, global);
  else
    applyBetaMean(in, ctx.blocks, opt_.beta, global);
}

std::vector<OptionSpec> pFedMeOptions() {
  return {
      {"pfedme.lambda", "15", "pFedMe regularisation lambda >= 0 (Moreau envelope lambda/2 ||theta - w||^2)"},
      {"pfedme.inner_steps", "5", "pFedMe K: gradient steps on each batch for the personal model (>= 1)"},
      {"pfedme.personal_lr", "0.09", "pFedMe personal learning rate for the K inner steps (> 0)"},
      {"pfedme.beta", "1", "pFedMe server mixing beta > 0: w <- (1 - beta) w + beta * mean (1 = plain average)"},
  };
}

std::unique_ptr<Algorithm> makePFedMe(const ExperimentConfig& cfg) {
  if (cfg.train.optimizer != OptimizerKind::Sgd)
    throw ConfigError(fmt("algorithm = pfedme: train.optimizer = ", cfg.train.optimizer,
                          " does not apply: pFedMe's updates are its own plain gradient steps (pfedme.personal_lr, "
                          "train.lr); expected train.optimizer = sgd"));
  return std::make_unique<PFedMe>(PFedMeOptions::parse(cfg.algo));
}

}  // namespace fedsilo
