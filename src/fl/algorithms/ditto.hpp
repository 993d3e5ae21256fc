// Ditto (Li, Hu, Beirami, Smith; ICML 2021, Algorithm 1): the global model w is trained and averaged
// exactly as FedAvg; in the same round each client then trains its personal model
//   v_k <- v_k - eta (grad F_k(v_k) + lambda (v_k - w^t))
// for the same number of local epochs (shared loop, the regulariser through a GradientHook), and is
// evaluated with v_k. v_k starts from the global model at the client's first participation; until
// then the client uses the global model.
#pragma once
#include "fl/algorithms/fedavg.hpp"
#include "fl/personal_store.hpp"

namespace fedsilo {

class Ditto : public FedAvg {
 public:
  explicit Ditto(double lambda) : lambda_(lambda) {}
  std::string name() const override { return "ditto"; }
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  PersonalStore* personalStore() override { return &personal_; }

 private:
  double lambda_;
  PersonalStore personal_;   // v_k
  std::vector<float> sent_;  // this round's trained global copy while the personal model trains
};

std::vector<OptionSpec> dittoOptions();
std::unique_ptr<Algorithm> makeDitto(const ExperimentConfig& cfg);

}  // namespace fedsilo
