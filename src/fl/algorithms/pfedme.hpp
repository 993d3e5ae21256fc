// pFedMe (Dinh, Tran, Nguyen; NeurIPS 2020, arXiv 2006.08848, Algorithm 1; docs/algorithms.md, "pfedme"):
//   personal model:  theta^ = argmin_theta f_k(theta; D) + lambda/2 ||theta - w_{k,r}||^2, solved
//                    approximately by K gradient steps (lr = pfedme.personal_lr) on ONE batch D,
//   local model:     w_{k,r+1} = w_{k,r} - eta lambda (w_{k,r} - theta^)        (eta = train.lr),
//   for every batch of train.epochs epochs over the client's data (R = epochs * ceil(n_k / B) steps),
//   server:          w^{t+1} = (1 - beta) w^t + beta * sum_k n_k w_{k,R} / sum_k n_k.
// theta starts each round from w^t and is warm-started across the round's batches (authors' code);
// the client is evaluated with its last theta^. The K inner steps are the shared LocalTrainer run on
// the batch alone (K one-batch epochs) with the proximal term as a GradientHook. Under DP-SGD
// (privacy.level = sample) each of the K inner steps takes its own Poisson batch of the client's records
// instead of reusing the outer batch, so that every step is a sampled Gaussian step the accountant
// charges (K x epochs x ceil(n_k / B) per round); the update of w_{k,r} and what is sent are
// post-processing of those steps.
#pragma once
#include "fl/algorithm.hpp"
#include "fl/personal_store.hpp"

namespace fedsilo {

struct PFedMeOptions {
  double lambda = 15.0;
  int innerSteps = 5;
  double personalLr = 0.09;
  double beta = 1.0;
  static PFedMeOptions parse(const OptionValues& o);
};

class PFedMe : public Algorithm {
 public:
  explicit PFedMe(PFedMeOptions o) : opt_(o) {}
  std::string name() const override { return "pfedme"; }
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override;
  PersonalStore* personalStore() override { return &personal_; }

 private:
  // The K inner steps on the current batch (under DP-SGD: on K Poisson batches); their mean loss.
  double innerSteps(ClientContext& c, TrainOptions& inner, const GradientHook& hook, Rng& rng);

  PFedMeOptions opt_;
  PersonalStore personal_;    // theta^ per local client
  std::vector<float> local_;  // w_{k,r} of the client being trained
  IndexList order_, batch_;
};

std::vector<OptionSpec> pFedMeOptions();
std::unique_ptr<Algorithm> makePFedMe(const ExperimentConfig& cfg);

}  // namespace fedsilo
