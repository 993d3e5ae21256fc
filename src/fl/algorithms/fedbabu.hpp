// FedBABU (Oh, Kim, Yun; ICLR 2022): the head (fedbabu.head: the model's last layer block, or the
// named trailing blocks, e.g. fc1,fc2 as the PLayer-FL authors' CNN) keeps its shared initial
// values and is frozen during federated training (its gradient is zeroed by a GradientHook; it is
// never sent nor averaged); the body is trained and averaged as FedAvg. After the last round every
// client fine-tunes its copy (fedbabu.finetune = head: the head only, as the PLayer-FL authors' code;
// full: the whole model, as the FedBABU paper) for fedbabu.finetune_epochs epochs and is evaluated
// with it.
#pragma once
#include "fl/algorithms/fedavg.hpp"
#include "fl/personal_store.hpp"

namespace fedsilo {

// fedbabu.finetune: what the clients fine-tune after the last round.
enum class FinetuneScope { Head, Full };

struct FedBabuOptions {
  FinetuneScope finetune = FinetuneScope::Head;
  int finetuneEpochs = 1;
  std::vector<std::string> head;  // the head's block names; empty: the last block ("last")
  static FedBabuOptions parse(const OptionValues& o);
};

// The index of the head's first block: the head must be the model's last blocks (named in any order)
// and leave at least one body block. ConfigError naming fedbabu.head, the value and the blocks otherwise.
int fedBabuHeadStart(const std::vector<std::string>& head, const std::vector<LayerBlock>& blocks,
                     const std::string& modelName);

class FedBabu : public FedAvg {
 public:
  explicit FedBabu(FedBabuOptions o) : opt_(o) {}
  std::string name() const override { return "fedbabu"; }
  std::vector<char> reducedBlocks(const FlContext& ctx, int round) const override;
  void setup(const FlContext& ctx, std::vector<float>& global) override;
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void finishClient(ClientContext& c) override;
  bool changesModelsAtEnd() const override { return opt_.finetuneEpochs > 0; }
  PersonalStore* personalStore() override { return &personal_; }

 private:
  FedBabuOptions opt_;
  int headStart_ = 0;                        // the head's first block
  std::size_t headBegin_ = 0, headEnd_ = 0;  // the head's slice of the flat parameters
  PersonalStore personal_;                   // fine-tuned models (after the last round)
  std::vector<float> keep_;
};

std::vector<OptionSpec> fedBabuOptions();
std::unique_ptr<Algorithm> makeFedBabu(const ExperimentConfig& cfg);

}  // namespace fedsilo
