// PLayer-FL (Elhussein, Pollet, Gürsoy; arXiv 2502.08829): federate the first p layer blocks, keep
// blocks p+1..L local on every client. p comes from the clients' "federation sensitivity" after the
// local training of round 0 (the driver measures it: ServerInput::sensitivity).
//
//   per client k, per block l: s_kl = mean over the block's weight tensors of mean_i (theta_i g_i)^2
//                              (layerSensitivity; biases only with playerfl.include_bias)      [V code]
//   normalised cumulative curve: F~_kl = sum_{j<=l} s_kj / s_k1                               [V code]
//   server curve:                F_l = mean_k F~_kl (unweighted)                              [I]
//   split:  r_l = F_{l+1} / F_l - 1,  p = min{ l in 1..L-1 : r_l > t },  none -> p = L - 1     [I]
//
// From the round after the split is known only blocks 1..p are reduced (sample-weighted mean, as
// FedAvg); every client keeps its own copy of blocks p+1..L across rounds. Each client evaluates with
// the global prefix and its own suffix. [V]/[I] tags and the reasons for the inferred rules:
// docs/algorithms.md, "playerfl" (Curve, Split rule).
#pragma once
#include <string>
#include <vector>

#include "fl/algorithm.hpp"
#include "fl/personal_store.hpp"

namespace fedsilo {

// The server's sensitivity curve from `rows` (clients x L raw sensitivities, row-major): each row is
// normalised by its first block and summed cumulatively, then the rows are averaged (unweighted).
// Rows with a non-finite value or s_1 <= 0 cannot be normalised and are skipped; `usedRows` (may be
// null) receives how many rows were averaged. All NaN when no row is usable.
std::vector<double> federationCurve(const std::vector<double>& rows, int L, int* usedRows = nullptr);

// The relative-jump split rule: the number p of federated blocks, in [1, L-1] for L >= 2
// (r_l = F_{l+1}/F_l - 1, p = smallest l with r_l > t; none, or a non-finite curve -> L-1).
int relativeJumpSplit(const std::vector<double>& curve, double threshold);

// playerfl.split as parsed: auto (the sensitivity rule), a number n >= 1 of federated blocks, or the
// name of the last federated block; resolveSplit checks it against the model's blocks at setup.
struct PlayerFlSplit {
  enum class Kind { Auto, Count, BlockName };
  Kind kind = Kind::Auto;
  int count = 0;              // Kind::Count
  std::string text = "auto";  // the value as given, trimmed (Kind::BlockName: the name)
  // ConfigError for an empty value or a number < 1.
  static PlayerFlSplit parse(const std::string& value);
};

// The number of federated blocks: 0 for auto; n for a number n in [1, L]; up to and including the
// named block. ConfigError naming the key, the value and the model's blocks otherwise.
int resolveSplit(const PlayerFlSplit& split, const std::vector<LayerBlock>& blocks, const std::string& modelName);

// "name1, name2, ...": the model's layer blocks, for error messages.
std::string blockList(const std::vector<LayerBlock>& blocks);

struct PlayerFlOptions {
  double threshold = 1.0;    // playerfl.threshold
  PlayerFlSplit split;       // playerfl.split
  bool includeBias = false;  // playerfl.include_bias
  static PlayerFlOptions parse(const OptionValues& o);
};

std::vector<OptionSpec> playerFlOptions();

class PlayerFl : public Algorithm {
 public:
  explicit PlayerFl(PlayerFlOptions opt) : opt_(std::move(opt)) {}
  std::string name() const override { return "playerfl"; }
  // No single model serves every client (the suffix is per client): no global accuracy.
  bool hasGlobalModel() const override { return false; }
  bool sensitivityIncludesBias() const override { return opt_.includeBias; }
  void setup(const FlContext& ctx, std::vector<float>& global) override;
  std::vector<char> reducedBlocks(const FlContext& ctx, int round) const override;
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override;
  bool acceptsServerOptimizer() const override { return true; }  // on the federated blocks only
  // The split, PLayer-FL's split and the curve (empty until round 0's sensitivities arrived).
  std::vector<double> serverState() const override;
  void setServerState(const std::vector<double>& state) override;
  // The global prefix and the client's own suffix (its whole model before the split is known).
  bool evalParams(const FlContext& ctx, int client, const std::vector<float>& global, float* out) const override;
  PersonalStore* personalStore() override { return &personal_; }
  void record(const FlContext& ctx, RecordSink& sink) const override;

  int split() const { return split_; }                // federated blocks (0: not decided yet)
  int playerFlSplit() const { return playerSplit_; }  // the sensitivity (or explicit) split
  const std::vector<double>& curve() const { return curve_; }

 protected:
  // The split this algorithm federates, given PLayer-FL's split (PlayerFlRandom draws another one).
  virtual int chooseSplit(int playerSplit) const { return playerSplit; }
  virtual const char* splitSource() const { return explicitSplit_ > 0 ? "explicit" : "sensitivity"; }
  // "split layer 2 of 3 (fc2): federated fc1, fc2; local fc3" (split_ > 0).
  std::string splitDescription() const;
  void announceSplit(const FlContext& ctx, int round) const;

  PlayerFlOptions opt_;
  int L_ = 0;
  std::uint64_t seed_ = 0;
  int explicitSplit_ = 0;  // from playerfl.split (0: auto)
  int split_ = 0;
  int playerSplit_ = 0;
  std::vector<double> curve_;  // empty until round 0's sensitivities arrived
  std::vector<std::string> blockNames_;
  PersonalStore personal_;  // each local client's last trained parameters (its suffix is what is used)
};

std::unique_ptr<Algorithm> makePlayerFl(const ExperimentConfig& cfg);

}  // namespace fedsilo
