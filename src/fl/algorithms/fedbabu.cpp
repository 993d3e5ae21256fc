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
  // Absent (options set by hand, not through the parser) means the default, as the parser fills it.
  const std::string head = o.has("fedbabu.head") ? trim(o.getString("fedbabu.head")) : std::string("last");
  if (head.empty()) throw ConfigError("fedbabu.head = '': expected last or a list of layer block names (fc1,fc2)");
  if (head == "last") return f;
  for (const std::string& name : splitList(head)) {
    const std::string block = trim(name);
    if (block.empty()) throw ConfigError(fmt("fedbabu.head = ", head, ": an empty block name"));
    f.head.push_back(block);
  }
  return f;
}

namespace {
std::string blockNames(const std::vector<LayerBlock>& blocks) {
  std::string s;
  for (const auto& b : blocks) s += (s.empty() ? "" : ", ") + b.name;
  return s;
}
}  // namespace

int fedBabuHeadStart(const std::vector<std::string>& head, const std::vector<LayerBlock>& blocks,
                     const std::string& modelName) {
  const int L = static_cast<int>(blocks.size());
  if (head.empty()) return L - 1;
  std::vector<char> inHead(blocks.size(), 0);
  std::string given;
  for (const std::string& name : head) {
    given += (given.empty() ? "" : ",") + name;
    int b = 0;
    while (b < L && blocks[static_cast<std::size_t>(b)].name != name) ++b;
    if (b == L)
      throw ConfigError(fmt("fedbabu.head: no layer block '", name, "'; model = ", modelName, " has blocks ",
                            blockNames(blocks)));
    inHead[static_cast<std::size_t>(b)] = 1;
  }
  int start = L;
  while (start > 0 && inHead[static_cast<std::size_t>(start - 1)]) --start;
  for (int b = 0; b < start; ++b)
    if (inHead[static_cast<std::size_t>(b)])
      throw ConfigError(fmt("fedbabu.head = ", given, ": the head must be the model's last blocks (model = ", modelName,
                            " has blocks ", blockNames(blocks), ")"));
  if (start == 0)
    throw ConfigError(fmt("fedbabu.head = ", given, ": every block of model = ", modelName,
                          " is in the head; FedBABU needs a body (at least one block before the head)"));
  return start;
}

void FedBabu::setup(const FlContext& ctx, std::vector<float>&) {
  if (ctx.numBlocks() < 2)
    throw ConfigError(fmt("algorithm = fedbabu: model = ", ctx.cfg.model.name, " has ", ctx.numBlocks(),
                          " layer block; FedBABU needs a body and a head (at least 2 blocks)"));
  headStart_ = fedBabuHeadStart(opt_.head, ctx.blocks, nameOf(ctx.cfg.model.name));
  const LayerBlock& first = ctx.blocks[static_cast<std::size_t>(headStart_)];
  const LayerBlock& last = ctx.blocks.back();
  headBegin_ = static_cast<std::size_t>(first.offset);
  headEnd_ = static_cast<std::size_t>(last.offset + last.size);
}

std::vector<char> FedBabu::reducedBlocks(const FlContext& ctx, int) const {
  std::vector<char> r(ctx.blocks.size(), 1);
  for (std::size_t b = static_cast<std::size_t>(headStart_); b < r.size(); ++b) r[b] = 0;  // never averaged
  return r;
}

void FedBabu::clientUpdate(ClientContext& c, ClientUpdate& out) {
  // Train everything but the head: freeze the complement of the body range [0, headBegin_) ...
  const GradientHook hook = freezeOutsideHook(0, headBegin_, c.trainOptions().optimizer.weightDecay);
  float* p = c.model.params();
  keep_.assign(p + headBegin_, p + headEnd_);
  trainAndSend(c, out, &hook);
  // ... and put the head back bit for bit (momentum or rounding cannot move it).
  std::memcpy(p + headBegin_, keep_.data(), keep_.size() * sizeof(float));
  for (std::size_t b = static_cast<std::size_t>(headStart_); b < out.blockWeight.size(); ++b) out.blockWeight[b] = 0.0;
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
    const GradientHook hook = freezeOutsideHook(headBegin_, headEnd_, o.optimizer.weightDecay);
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
      {"fedbabu.head", "last",
       "FedBABU head: last (the model's last layer block) or the names of the trailing blocks that form it, "
       "e.g. fc1,fc2"},
  };
}

std::unique_ptr<Algorithm> makeFedBabu(const ExperimentConfig& cfg) {
  return std::make_unique<FedBabu>(FedBabuOptions::parse(cfg.algo));
}

}  // namespace fedsilo
