#include "fl/algorithms/playerfl.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/types.hpp"
#include "fl/aggregation.hpp"
#include "fl/state_packer.hpp"

namespace fedsilo {

namespace {

bool isNumber(const std::string& s) {
  if (s.empty()) return false;
  for (char ch : s)
    if (ch < '0' || ch > '9') return false;
  return true;
}
}  // namespace

std::string blockList(const std::vector<LayerBlock>& blocks) {
  std::string s;
  for (const auto& b : blocks) s += (s.empty() ? "" : ", ") + b.name;
  return s;
}

std::vector<double> federationCurve(const std::vector<double>& rows, int L, int* usedRows) {
  FEDSILO_ASSERT(L >= 1 && rows.size() % static_cast<std::size_t>(L) == 0);
  const std::size_t n = rows.size() / static_cast<std::size_t>(L);
  std::vector<double> sum(static_cast<std::size_t>(L), 0.0), row(static_cast<std::size_t>(L));
  int used = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const double* s = rows.data() + k * static_cast<std::size_t>(L);
    bool ok = std::isfinite(s[0]) && s[0] > 0.0;
    double cum = 0.0;
    for (int l = 0; l < L && ok; ++l) {
      cum += s[l] / s[0];  // F~_kl = sum_{j<=l} s_kj / s_k1
      ok = std::isfinite(cum);
      row[static_cast<std::size_t>(l)] = cum;
    }
    if (!ok) continue;
    for (int l = 0; l < L; ++l) sum[static_cast<std::size_t>(l)] += row[static_cast<std::size_t>(l)];
    ++used;
  }
  if (usedRows) *usedRows = used;
  if (used == 0) return std::vector<double>(static_cast<std::size_t>(L), kNaN);
  for (double& v : sum) v /= used;
  return sum;
}

int relativeJumpSplit(const std::vector<double>& F, double threshold) {
  const int L = static_cast<int>(F.size());
  FEDSILO_ASSERT(L >= 2, "the split rule needs at least 2 layer blocks, got ", L);
  for (int l = 1; l <= L - 1; ++l) {  // l counts blocks from 1: r_l compares F_{l+1} with F_l
    const double Fl = F[static_cast<std::size_t>(l - 1)], Fn = F[static_cast<std::size_t>(l)];
    if (!std::isfinite(Fl) || !std::isfinite(Fn) || !(Fl > 0.0)) return L - 1;
    if (Fn / Fl - 1.0 > threshold) return l;
  }
  return L - 1;
}

PlayerFlSplit PlayerFlSplit::parse(const std::string& value) {
  PlayerFlSplit s;
  s.text = trim(value);
  if (s.text.empty())
    throw ConfigError("playerfl.split = '': expected auto, a number of federated blocks or a block name");
  if (s.text == "auto") return s;
  if (!isNumber(s.text)) {
    s.kind = Kind::BlockName;
    return s;
  }
  if (s.text.size() > 9 || std::stoll(s.text) < 1)
    throw ConfigError(fmt("playerfl.split = ", s.text, ": a number of federated blocks must be >= 1"));
  s.kind = Kind::Count;
  s.count = static_cast<int>(std::stoll(s.text));
  return s;
}

int resolveSplit(const PlayerFlSplit& split, const std::vector<LayerBlock>& blocks, const std::string& modelName) {
  const int L = static_cast<int>(blocks.size());
  switch (split.kind) {
    case PlayerFlSplit::Kind::Auto:
      return 0;
    case PlayerFlSplit::Kind::Count:
      if (split.count > L)
        throw ConfigError(fmt("playerfl.split = ", split.text, ": expected auto, a number of federated blocks in [1, ",
                              L, "] or a block name; model = ", modelName, " has blocks ", blockList(blocks)));
      return split.count;
    case PlayerFlSplit::Kind::BlockName:
      for (int b = 0; b < L; ++b)
        if (blocks[static_cast<std::size_t>(b)].name == split.text) return b + 1;
  }
  throw ConfigError(fmt("playerfl.split = ", split.text, ": no layer block of that name; model = ", modelName,
                        " has blocks ", blockList(blocks), " (or give auto or a number of federated blocks)"));
}

PlayerFlOptions PlayerFlOptions::parse(const OptionValues& o) {
  PlayerFlOptions p;
  p.threshold = o.getDouble("playerfl.threshold", 0.0, 1e12);
  p.split = PlayerFlSplit::parse(o.getString("playerfl.split"));
  p.includeBias = o.getBool("playerfl.include_bias");
  return p;
}

std::vector<OptionSpec> playerFlOptions() {
  return {
      {"playerfl.threshold", "1",
       "relative-jump threshold t of the split rule (split at the first l with F_{l+1}/F_l - 1 > t); inferred rule, "
       "default unverified (docs/algorithms.md)"},
      {"playerfl.split", "auto",
       "auto (sensitivity rule), or the number of federated blocks, or the name of the last federated block"},
      {"playerfl.include_bias", "false",
       "include bias tensors in the layer sensitivity (the authors' code skips them)"},
  };
}

void PlayerFl::setup(const FlContext& ctx, std::vector<float>&) {
  L_ = ctx.numBlocks();
  seed_ = ctx.cfg.seed;
  blockNames_.clear();
  for (const auto& b : ctx.blocks) blockNames_.push_back(b.name);
  if (L_ < 2)
    throw ConfigError(fmt("algorithm = ", name(), ": model = ", ctx.cfg.model.name, " has ", L_, " layer block(s) (",
                          blockList(ctx.blocks), "); splitting into federated and local layers needs at least 2"));
  explicitSplit_ = resolveSplit(opt_.split, ctx.blocks, nameOf(ctx.cfg.model.name));
  if (explicitSplit_ > 0) {
    playerSplit_ = explicitSplit_;
    split_ = chooseSplit(playerSplit_);
    announceSplit(ctx, -1);
  }
}

std::string PlayerFl::splitDescription() const {
  const auto names = [&](int from, int to) {
    std::string s;
    for (int b = from; b < to; ++b) s += (s.empty() ? "" : ", ") + blockNames_[static_cast<std::size_t>(b)];
    return s.empty() ? std::string("none") : s;
  };
  return fmt("split layer ", split_, " of ", L_, " (", blockNames_[static_cast<std::size_t>(split_ - 1)],
             "): federated ", names(0, split_), "; local ", names(split_, L_));
}

std::vector<char> PlayerFl::reducedBlocks(const FlContext& ctx, int) const {
  std::vector<char> r(ctx.blocks.size(), 1);
  // Before the split is known (round 0 in auto mode) every block is reduced; serverUpdate applies
  // only the prefix once it has chosen the split.
  if (split_ > 0)
    for (std::size_t b = static_cast<std::size_t>(split_); b < r.size(); ++b) r[b] = 0;
  return r;
}

void PlayerFl::clientUpdate(ClientContext& c, ClientUpdate& out) {
  const std::size_t P = static_cast<std::size_t>(c.model.numParams());
  float* p = c.model.params();
  // Global prefix (already in the model) + this client's local suffix.
  if (split_ > 0 && split_ < L_) {
    if (const std::vector<float>* mine = personal_.find(c.client.id)) {
      const std::size_t off = static_cast<std::size_t>(c.fl.blocks[static_cast<std::size_t>(split_)].offset);
      std::memcpy(p + off, mine->data() + off, (P - off) * sizeof(float));
    }
  }
  Rng rng = c.shuffleRng();
  const TrainStats st = c.trainer.train(c.model, c.client.train, c.trainOptions(), rng, c.client.id, c.round);
  out.trainLoss = st.meanLoss;
  personal_.put(c.client.id, p, P);
  const int sent = split_ > 0 ? split_ : L_;
  out.blockWeight.assign(static_cast<std::size_t>(L_), 0.0);
  for (int b = 0; b < sent; ++b)
    out.blockWeight[static_cast<std::size_t>(b)] = static_cast<double>(c.client.numTrain());
  out.vector = p;
}

void PlayerFl::serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  if (curve_.empty() && !in.sensitivity.empty()) {
    int used = 0;
    curve_ = federationCurve(in.sensitivity, L_, &used);
    if (used < static_cast<int>(in.sensitivityClients.size()))
      ctx.announce().warning(fmt("playerfl: ", static_cast<int>(in.sensitivityClients.size()) - used, " of ",
                                 in.sensitivityClients.size(),
                                 " clients' sensitivity rows could not be normalised (first block 0 or not finite) "
                                 "and were left out of the curve"));
  }
  if (split_ == 0) {
    if (curve_.empty() || !std::isfinite(curve_[0]))
      ctx.announce().warning(
          fmt("playerfl: no usable sensitivity in round ", in.round, "; federating all but the last block"));
    playerSplit_ = curve_.empty() ? L_ - 1 : relativeJumpSplit(curve_, opt_.threshold);
    split_ = chooseSplit(playerSplit_);
    announceSplit(ctx, in.round);
  }
  applyPrefixWeightedMean(in, ctx.blocks, split_, global);
}

// The split as it is decided, in round `round` (-1: at set-up, from playerfl.split), and why: the
// option, or the rule with its threshold and the federation curve; PLayer-FL-Random's draw also names
// the split it avoided.
void PlayerFl::announceSplit(const FlContext& ctx, int round) const {
  std::string curve;
  for (double f : curve_) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", f);
    curve += (curve.empty() ? "" : ", ") + std::string(b);
  }
  const std::string rule = explicitSplit_ > 0 ? fmt("playerfl.split = ", opt_.split.text)
                                              : fmt("relative-jump rule, threshold ", opt_.threshold,
                                                    ", on the federation curve [", curve, "]");
  const std::string why =
      split_ == playerSplit_ ? rule : fmt("random draw avoiding PLayer-FL's split ", playerSplit_, " from the ", rule);
  const std::string when = round >= 0 ? fmt("round ", round, ": ") : std::string();
  ctx.announce().decision(fmt(name(), ": ", when, splitDescription(), " (", why, ")"));
}

std::vector<double> PlayerFl::serverState() const {
  StatePacker p;
  p.scalar(split_);
  p.scalar(playerSplit_);
  p.doubles(curve_);
  return p.take();
}

void PlayerFl::setServerState(const std::vector<double>& state) {
  StateReader r(state);
  split_ = r.integer();
  playerSplit_ = r.integer();
  curve_ = r.doubles();
  FEDSILO_ASSERT(r.done(), "server state of ", name(), " has trailing values");
}

bool PlayerFl::evalParams(const FlContext& ctx, int client, const std::vector<float>& global, float* out) const {
  const std::vector<float>* mine = personal_.find(client);
  if (!mine) return false;  // never trained: the global prefix and the shared initial suffix
  std::memcpy(out, global.data(), global.size() * sizeof(float));
  // Before the split is known the client's own model is all it has.
  const std::size_t off =
      split_ > 0 ? (split_ < L_ ? static_cast<std::size_t>(ctx.blocks[static_cast<std::size_t>(split_)].offset)
                                : global.size())
                 : 0;
  std::memcpy(out + off, mine->data() + off, (global.size() - off) * sizeof(float));
  return true;
}

void PlayerFl::record(const FlContext&, RecordSink& sink) const {
  sink.writeIntScalar("/playerfl/split_layer", split_);
  sink.writeStringAttribute("/playerfl/split_layer", "name",
                            split_ > 0 ? blockNames_[static_cast<std::size_t>(split_ - 1)] : std::string());
  sink.writeStringAttribute("/playerfl/split_layer", "source", splitSource());
  std::vector<double> curve = curve_.empty() ? std::vector<double>(static_cast<std::size_t>(L_), kNaN) : curve_;
  sink.writeArray("/playerfl/curve", curve, {static_cast<std::uint64_t>(L_)});
  sink.writeScalar("/playerfl/threshold", opt_.threshold);
  sink.writeIntScalar("/playerfl/playerfl_split_layer", playerSplit_);
}

std::unique_ptr<Algorithm> makePlayerFl(const ExperimentConfig& cfg) {
  return std::make_unique<PlayerFl>(PlayerFlOptions::parse(cfg.algo));
}

}  // namespace fedsilo
