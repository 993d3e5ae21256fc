// pFedMe (Dinh, Tran, Nguyen; NeurIPS 2020, Algorithm 1; ALGORITHMS.md section 4):
//   personal model:  theta^ = argmin_theta f_k(theta; D) + lambda/2 ||theta - w_{k,r}||^2, solved
//                    approximately by K gradient steps (lr = pfedme.personal_lr) on ONE batch D,
//   local model:     w_{k,r+1} = w_{k,r} - eta lambda (w_{k,r} - theta^)        (eta = train.lr),
//   for every batch of train.epochs epochs over the client's data (R = epochs * ceil(n_k / B) steps),
//   server:          w^{t+1} = (1 - beta) w^t + beta * sum_k n_k w_{k,R} / sum_k n_k.
// theta starts each round from w^t and is warm-started across the round's batches (authors' code);
// the client is evaluated with its last theta^. The K inner steps are the shared LocalTrainer run on
// the batch alone (K one-batch epochs) with the proximal term as a GradientHook.
#pragma once
#include "fl/local.hpp"

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
  bool evalParams(const FlContext& ctx, int client, const std::vector<float>& global, float* out) const override;
  void checkpoint(StateArchive& ar) override {
    Algorithm::checkpoint(ar);
    ar.clientFloats("personal", personal_.all());
  }
  PersonalStore* personalStore() override { return &personal_; }

 private:
  PFedMeOptions opt_;
  PersonalStore personal_;   // theta^ per local client
  std::vector<float> local_;  // w_{k,r} of the client being trained
  IndexList order_, batch_;
};

// w <- (1 - beta) w + beta * (weighted mean) for every reduced block with a positive weight sum.
void applyBetaMean(const ServerInput& in, const std::vector<LayerBlock>& blocks, double beta, std::vector<float>& global);

std::vector<OptionSpec> pFedMeOptions();
std::unique_ptr<Algorithm> makePFedMe(const ExperimentConfig& cfg);

}  // namespace fedsilo
