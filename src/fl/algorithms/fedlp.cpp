#include "fl/algorithms/fedlp.hpp"

#include "core/error.hpp"

namespace fedsilo {

std::vector<char> fedLpKeepMask(std::uint64_t seed, int client, int round, int L, double keepProb) {
  Rng rng(seed, client, round, Purpose::LayerKeep);
  std::vector<char> keep(static_cast<std::size_t>(L));
  for (auto& k : keep) k = rng.bernoulli(keepProb) ? 1 : 0;
  return keep;
}

void FedLp::clientUpdate(ClientContext& c, ClientUpdate& out) {
  trainAndSend(c, out);
  const std::vector<char> keep = fedLpKeepMask(c.fl.cfg.seed, c.client.id, c.round, c.fl.numBlocks(), keepProb_);
  for (std::size_t b = 0; b < keep.size(); ++b)
    if (!keep[b]) out.blockWeight[b] = 0.0;
}

std::vector<OptionSpec> fedLpOptions() {
  return {
      {"fedlp.keep_prob", "0.7", "FedLP layer-preserving rate p in (0, 1]: probability that a client uploads a layer"}};
}

std::unique_ptr<Algorithm> makeFedLp(const ExperimentConfig& cfg) {
  const double p = cfg.algo.getDouble("fedlp.keep_prob", 0.0, 1.0);
  if (!(p > 0.0))
    throw ConfigError(fmt("fedlp.keep_prob = ", cfg.algo.raw("fedlp.keep_prob"), ": expected a number in (0, 1]"));
  return std::make_unique<FedLp>(p);
}

}  // namespace fedsilo
