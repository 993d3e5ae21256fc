#include "fl/algorithms/fedbabu.hpp"

#include <cstring>

#include "core/error.hpp"
#include "fl/gradient_hooks.hpp"

namespace fedsilo {

template <>
const std::vector<EnumName<FinetuneScope>>& enumNames<FinetuneScope>() {
  static const std::vector<EnumName<FinetuneScope>> names = {{FinetuneScope::Head, "head"}, {FinetuneScope::Full, "full"}};
  return names;
}

FedBabuOptions FedBabuOptions::parse(const OptionValues& o) {
  FedBabuOptions f;
  f.finetune = parseEnum<FinetuneScope>("fedbabu.finetune", o.getString("fedbabu.finetune"));
  f.finetuneEpochs = static_cast<int>(o.getInt("fedbabu.finetune_epochs", 0, 100000));
  return f;
}

void FedBabu::setup(const FlContext& ctx, std::vector<float>&) {
  if (ctx.numBlocks() < 2)
    throw ConfigError(fmt("algorithm = fedbabu: model = ", ctx.cfg.model.name, " has ", ctx.numBlocks(),
                          " layer block; FedBABU needs a body and a head (at least 2 blocks)"));
  const LayerBlock& head = ctx.blocks.back();
  headBegin_ = static_cast<std::size_t>(head.offset);
  headEnd_ = static_cast<std::size_t>(head.offset + head.size);
}

std::vector<char> FedBabu::reducedBlocks(const FlContext& ctx, int) const {
  std::vector<char> r(ctx.blocks.size(), 1);
  r.back() = 0;  // the head is never averaged
  return r;
}

void FedBabu::clientUpdate(ClientContext& c, ClientUpdate& out) {
  // Train everything but the head: freeze the complement of the body range [0, headBegin_) ...
  const GradientHook hook = freezeOutsideHook(0, headBegin_, c.trainOptions().weightDecay);
  float* p = c.model.params();
  keep_.assign(p + headBegin_, p + headEnd_);
  trainAndSend(c, out, &hook);
  // ... and put the head back bit for bit (momentum or rounding cannot move it).
  std::memcpy(p + headBegin_, keep_.data(), keep_.size() * sizeof(float));
  out.blockWeight.back() = 0.0;
}

void FedBabu::finishClient(ClientContext& c) {
  if (opt_.finetuneEpochs == 0) return;
  float* p = c.model.params();  // the final global model
  const std::size_t P = static_cast<std::size_t>(c.model.numParams());
  TrainOptions o = c.trainOptions();
  o.epochs = opt_.finetuneEpochs;
  Rng rng = c.shuffleRng();  // round = rounds: a stream of its own
  if (opt_.finetune == FinetuneScope::Full) {
    c.trainer.train(c.model, c.client.train, o, rng, c.client.id, c.round);
  } else {
    const GradientHook hook = freezeOutsideHook(headBegin_, headEnd_, o.weightDecay);
    keep_.assign(p, p + headBegin_);
    c.trainer.train(c.model, c.client.train, o, rng, c.client.id, c.round, &hook);
    std::memcpy(p, keep_.data(), keep_.size() * sizeof(float));
  }
  personal_.put(c.client.id, p, P);
}

std::vector<OptionSpec> fedBabuOptions() {
  return {
      {"fedbabu.finetune", "head",
       "FedBABU fine-tuning after the last round: head (PLayer-FL code) | full (FedBABU paper)"},
      {"fedbabu.finetune_epochs", "1", "FedBABU fine-tuning epochs per client (>= 0; 0 = none)"},
  };
}

std::unique_ptr<Algorithm> makeFedBabu(const ExperimentConfig& cfg) {
  return std::make_unique<FedBabu>(FedBabuOptions::parse(cfg.algo));
}

}  // namespace fedsilo
