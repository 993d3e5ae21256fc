// The typed experiment configuration. app/config_parser fills and validates it from the INI file and
// the command line (Boost.Program_options); everything below app reads only these typed structs.
// Algorithm-specific options are declared next to each algorithm (OptionSpec) and parsed once, at
// start-up, into that algorithm's own typed struct through OptionValues.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/compress_config.hpp"
#include "core/privacy_config.hpp"
#include "core/robust_config.hpp"
#include "core/system_config.hpp"

namespace fedsilo {

// Enumerated options (dataset, partition.scheme, model, model.loss, fl.placement), converted from their
// names once, by the configuration parser. Algorithms' own enumerated options (gems.init, ...) use the
// same pattern: an enumNames<E>() specialisation next to the algorithm, and parseEnum when parsing.
enum class DatasetKind { FashionMnist, Mnist, Emnist, Cifar10, Leaf, Synthetic, Csv, Hdf5, Sequence, Heart };
// dataset = heart: the PLayer-FL authors' preprocessing (10 raw features, 5 classes) or FLamby's (13, binary).
enum class HeartVariant { PlayerFl, Flamby };
enum class PartitionScheme { Iid, Dirichlet, Shards, Labels, File, Natural };
enum class ModelPreset { Mlp, Logreg, Svm, CnnMcMahan, CnnPlayerFl, Lstm, HeartMlp, CnnPlayerFlCifar,
                         TransformerPlayerFl };
enum class LossKind { CrossEntropy, Hinge, Focal, FocalPlayerFl };
enum class PlacementBalance { Samples, Clients };
// Client training protocol: optimizer, its state across rounds, the learning-rate schedule over rounds.
enum class OptimizerKind { Sgd, Adam, AdamW };
enum class OptimizerStateMode { Reset, Keep };
enum class LrSchedule { Constant, Step, Exponential, Cosine };
// The convolutions' arithmetic (nn/bf16.hpp): fp32, or bf16 operands with fp32 accumulation.
enum class Precision { Fp32, Bf16 };
// Initialisation and input scaling.
enum class InitScheme { PytorchDefault, KaimingNormal, KaimingUniform, XavierUniform };
enum class BiasInit { Default, Zero };
enum class NormalizeKind { None, MeanStd };
enum class AugmentKind { None, Affine };
// The server optimizer applied to the aggregate (FedOpt, Reddi et al. 2021; fl/server_optimizer.hpp)
// and the evaluation rules (eval.select, eval.select_metric, eval.point, eval.client_weighting,
// eval.global).
enum class ServerOptimizerKind { None, Momentum, Adam, Yogi, Adagrad };
enum class EvalSelect { Final, BestVal };
enum class SelectMetric { Accuracy, Loss };
enum class EvalPoint { AfterAggregation, AfterLocal };
enum class ClientWeighting { Uniform, Samples };
enum class GlobalEvaluation { Rounds, End };

// One value of an enumerated option: its spelling in the INI file and on the command line, and a few
// words for --help where the name alone does not say enough.
template <typename E>
struct EnumName {
  E value;
  const char* name;
  const char* help = nullptr;
};

// THE list of each enumeration's values, in --help order (core/config.cpp): the parser's check, the
// --help text and the conversions below all read it.
template <typename E>
const std::vector<EnumName<E>>& enumNames();
template <>
const std::vector<EnumName<DatasetKind>>& enumNames<DatasetKind>();
template <>
const std::vector<EnumName<HeartVariant>>& enumNames<HeartVariant>();
template <>
const std::vector<EnumName<PartitionScheme>>& enumNames<PartitionScheme>();
template <>
const std::vector<EnumName<ModelPreset>>& enumNames<ModelPreset>();
template <>
const std::vector<EnumName<LossKind>>& enumNames<LossKind>();
template <>
const std::vector<EnumName<PlacementBalance>>& enumNames<PlacementBalance>();
template <>
const std::vector<EnumName<OptimizerKind>>& enumNames<OptimizerKind>();
template <>
const std::vector<EnumName<OptimizerStateMode>>& enumNames<OptimizerStateMode>();
template <>
const std::vector<EnumName<LrSchedule>>& enumNames<LrSchedule>();
template <>
const std::vector<EnumName<Precision>>& enumNames<Precision>();
template <>
const std::vector<EnumName<InitScheme>>& enumNames<InitScheme>();
template <>
const std::vector<EnumName<BiasInit>>& enumNames<BiasInit>();
template <>
const std::vector<EnumName<NormalizeKind>>& enumNames<NormalizeKind>();
template <>
const std::vector<EnumName<AugmentKind>>& enumNames<AugmentKind>();
template <>
const std::vector<EnumName<ServerOptimizerKind>>& enumNames<ServerOptimizerKind>();
template <>
const std::vector<EnumName<EvalSelect>>& enumNames<EvalSelect>();
template <>
const std::vector<EnumName<SelectMetric>>& enumNames<SelectMetric>();
template <>
const std::vector<EnumName<EvalPoint>>& enumNames<EvalPoint>();
template <>
const std::vector<EnumName<ClientWeighting>>& enumNames<ClientWeighting>();
template <>
const std::vector<EnumName<GlobalEvaluation>>& enumNames<GlobalEvaluation>();
template <>
const std::vector<EnumName<PrivacyLevel>>& enumNames<PrivacyLevel>();
template <>
const std::vector<EnumName<NoisePlacement>>& enumNames<NoisePlacement>();
template <>
const std::vector<EnumName<AggregatorKind>>& enumNames<AggregatorKind>();
template <>
const std::vector<EnumName<AttackKind>>& enumNames<AttackKind>();

// The name of a value ("dirichlet").
template <typename E>
const char* nameOf(E value) {
  for (const auto& entry : enumNames<E>())
    if (entry.value == value) return entry.name;
  return "?";  // unreachable: every enumerator has a row
}

// The names joined by `separator` ("iid | dirichlet | ..."); entries with help get it in parentheses.
template <typename E>
std::string joinNames(const std::string& separator, bool withHelp = false) {
  std::string out;
  for (const auto& entry : enumNames<E>()) {
    if (!out.empty()) out += separator;
    out += entry.name;
    if (withHelp && entry.help) out += std::string(" (") + entry.help + ")";
  }
  return out;
}

// The value named `text` (surrounding blanks ignored), or nullopt.
template <typename E>
std::optional<E> findEnum(const std::string& text) {
  const std::string name = trim(text);
  for (const auto& entry : enumNames<E>())
    if (name == entry.name) return entry.value;
  return std::nullopt;
}
// As findEnum, but throws ConfigError "key = text: expected one of a, b, c" for an unknown name.
template <typename E>
E parseEnum(const std::string& key, const std::string& text) {
  if (const std::optional<E> value = findEnum<E>(text)) return *value;
  throw ConfigError(fmt(key, " = ", text, ": expected one of ", joinNames<E>(", ")));
}

// Messages print the names (fmt("model = ", cfg.model.name)).
std::ostream& operator<<(std::ostream& os, DatasetKind value);
std::ostream& operator<<(std::ostream& os, HeartVariant value);
std::ostream& operator<<(std::ostream& os, PartitionScheme value);
std::ostream& operator<<(std::ostream& os, ModelPreset value);
std::ostream& operator<<(std::ostream& os, LossKind value);
std::ostream& operator<<(std::ostream& os, PlacementBalance value);
std::ostream& operator<<(std::ostream& os, OptimizerKind value);
std::ostream& operator<<(std::ostream& os, OptimizerStateMode value);
std::ostream& operator<<(std::ostream& os, LrSchedule value);
std::ostream& operator<<(std::ostream& os, Precision value);
std::ostream& operator<<(std::ostream& os, InitScheme value);
std::ostream& operator<<(std::ostream& os, BiasInit value);
std::ostream& operator<<(std::ostream& os, NormalizeKind value);
std::ostream& operator<<(std::ostream& os, AugmentKind value);
std::ostream& operator<<(std::ostream& os, ServerOptimizerKind value);
std::ostream& operator<<(std::ostream& os, EvalSelect value);
std::ostream& operator<<(std::ostream& os, SelectMetric value);
std::ostream& operator<<(std::ostream& os, EvalPoint value);
std::ostream& operator<<(std::ostream& os, ClientWeighting value);
std::ostream& operator<<(std::ostream& os, GlobalEvaluation value);
std::ostream& operator<<(std::ostream& os, PrivacyLevel value);
std::ostream& operator<<(std::ostream& os, NoisePlacement value);
std::ostream& operator<<(std::ostream& os, AggregatorKind value);
std::ostream& operator<<(std::ostream& os, AttackKind value);

// The client optimizer and its coefficients (train.optimizer, train.lr, ...; PyTorch 1.13 semantics,
// optim/optimizer.hpp). TrainConfig is one, and the trainer takes its settings from it by one
// assignment (TrainOptions::from), so that a new coefficient is declared here once.
struct OptimizerSettings {
  OptimizerKind optimizer = OptimizerKind::Sgd;
  double lr = 0.05;
  double momentum = 0.0;                          // sgd
  double weightDecay = 0.0;  // L2 in the gradient (sgd, adam) or decoupled (adamw), as in torch.optim
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adam, adamw
  bool amsgrad = false;                           // adam, adamw
  bool nesterov = false;                          // sgd, needs momentum > 0
};

struct TrainConfig : OptimizerSettings {
  int epochs = 1;
  int batch = 32;
  OptimizerStateMode optimizerState = OptimizerStateMode::Reset;
  // The learning rate over rounds (optim/lr_schedule.hpp): lr is round 0's.
  LrSchedule lrSchedule = LrSchedule::Constant;
  int lrStepRounds = 1;   // step: multiply by lrGamma every lrStepRounds rounds
  double lrGamma = 0.1;   // step, exponential
  double lrMin = 0.0;     // cosine: the floor
  Precision precision = Precision::Fp32;  // of the convolutions' products
};

struct PartitionConfig {
  PartitionScheme scheme = PartitionScheme::Dirichlet;
  double alpha = 0.5;                // dirichlet concentration
  int shards = 200;                  // number of label-sorted shards
  int shardsPerClientMin = 2;        // shards_per_client = N or min,max
  int shardsPerClientMax = 2;
  std::string file;                  // .npy of client ids, one per training sample
  long long samplesPerClient = 0;      // 0 = all; else truncate each client's slice to this many samples
};

struct DataConfig {
  DatasetKind dataset = DatasetKind::FashionMnist;
  std::string dir;                   // default per dataset (fashion_mnist: /usr/share/datasets/fashion-mnist)
  std::string file;                  // csv / hdf5 datasets
  std::vector<double> split{0.8, 0.1, 0.1};  // per-client train/val/test fractions
  // synthetic(alpha, beta)
  double alpha = 1.0, beta = 1.0;
  int users = 100;
  // csv
  std::string labelColumn = "label";
  std::string clientColumn;
  HeartVariant heartVariant = HeartVariant::PlayerFl;  // dataset = heart (data/heart_loader.cpp)
  // sequence (built-in text-like task)
  int seqLength = 20;
  int vocabSize = 50;
  int samplesPerUser = 200;
  int numClasses = 0;                // data.classes, sequence/synthetic: 0 = default
  // Upper bound on the classes of a dataset read from files: every label must lie in [0, maxClasses),
  // checked while the files are read, so that one stray label (say 2147483647) cannot size the model.
  int maxClasses = 100000;
  long long limit = 0;               // > 0: keep only the first `limit` training samples
  // Input scaling x <- (x - mean_c) / std_c per channel; mean/std empty: the clients' training data's own.
  NormalizeKind normalize = NormalizeKind::None;
  std::vector<double> mean, std;
  // Training-batch augmentation of images (data/augment.hpp).
  AugmentKind augment = AugmentKind::None;
  double augmentRotation = 10.0;     // degrees: angle ~ U(-r, r)
  double augmentTranslate = 0.1;     // fraction of the side: shift ~ U(-t W, t W), rounded
  double augmentScaleMin = 1.0, augmentScaleMax = 1.0;
  bool augmentFlip = false;          // horizontal flip with probability 1/2
  int augmentCropPadding = 0;        // random crop of the image padded by this many zero pixels
};

struct ModelConfig {
  ModelPreset name = ModelPreset::Mlp;  // the option `model`
  std::vector<int> hidden{200, 200}; // mlp hidden widths
  double dropout = 0.0;
  std::optional<LossKind> loss;      // none: the preset's default (cross_entropy; svm: hinge)
  double focalGamma = 2.0;
  std::vector<double> focalAlpha;    // focal loss: per-class weights alpha_c (empty: all 1)
  int embedDim = 32;
  int lstmHidden = 64;
  int lstmLayers = 2;
  int maxLen = 0;                    // transformer: rows of the position table (0: the data's sequence length)
  InitScheme initScheme = InitScheme::PytorchDefault;  // dense and conv weights (nn/init.hpp)
  BiasInit initBias = BiasInit::Default;
  std::string initFile;              // model.init: the initial global model from a results file or checkpoint
};

// FedOpt's server step on the pseudo-gradient Delta = aggregate - w (fl.server_*).
struct ServerOptimizerConfig {
  ServerOptimizerKind kind = ServerOptimizerKind::None;
  double lr = 1.0;        // eta
  double momentum = 0.9;  // momentum: beta of m <- beta m + Delta
  double beta1 = 0.9;     // adam, yogi, adagrad: m <- beta1 m + (1 - beta1) Delta
  double beta2 = 0.99;    // adam, yogi: second-moment decay
  double tau = 1e-3;      // adaptivity (denominator sqrt(v) + tau; v starts at tau^2)
};

struct FlConfig {
  int clientsPerRound = 0;           // 0 = all clients every round
  double dropout = 0.0;              // probability that a selected client drops out of a round
  bool skipDiverged = false;         // drop a NaN/Inf client update instead of failing
  PlacementBalance placement = PlacementBalance::Samples;  // what the ranks' shares of the clients balance
  ServerOptimizerConfig serverOptimizer;
  int maxConcurrency = 0;            // asynchronous algorithms: silos training at once (0 = every silo)
};

struct EvalConfig {
  int every = 1;                     // evaluate every N rounds (the last round always)
  int batch = 1000;
  EvalSelect select = EvalSelect::Final;           // which evaluated model the summary uses
  SelectMetric selectMetric = SelectMetric::Accuracy;  // best_val: higher accuracy or lower loss
  EvalPoint point = EvalPoint::AfterAggregation;   // when a client that trained is evaluated
  ClientWeighting clientWeighting = ClientWeighting::Uniform;  // weights of /summary/mean
  GlobalEvaluation global = GlobalEvaluation::Rounds;          // which rounds evaluate the global model
  double everySeconds = 0.0;  // asynchronous algorithms: evaluate each time the simulated clock passes a multiple (0 = off)
};

struct OutputConfig {
  std::string path = "results.h5";
  bool clientModels = false;         // also write /model/clients[K,P]
  bool jsonl = false;                // also write <path>.jsonl, one JSON object per round
  double progressSeconds = 10.0;     // least time between two progress lines within a round (0 = none)
  bool quiet = false;                // --quiet: nothing on standard output (command line only, not in the INI)
  bool overwrite = false;            // --overwrite: may replace a finished run's results file (command line only)
};

struct CheckpointConfig {
  int every = 0;                     // 0 = only on SIGTERM/SIGUSR1
  bool resume = false;
};

// Algorithm options as validated strings, keyed "section.key" (e.g. "fedprox.mu"). Typed getters
// throw ConfigError naming the key, the bad value and what was expected.
class OptionValues {
 public:
  void set(const std::string& key, const std::string& value) { values_[key] = value; }
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  const std::string& raw(const std::string& key) const;
  std::string getString(const std::string& key) const { return raw(key); }
  double getDouble(const std::string& key, double min, double max) const;
  long long getInt(const std::string& key, long long min, long long max) const;
  bool getBool(const std::string& key) const;  // parseBool
  std::vector<int> getIntList(const std::string& key, int min, int max) const;  // "" -> empty
  const std::map<std::string, std::string>& all() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

// A boolean option's value: true/false, 1/0, yes/no or on/off in any case, surrounding blanks ignored.
// ConfigError naming the key, the value and the accepted forms otherwise.
bool parseBool(const std::string& key, const std::string& text);

// A declared algorithm option: shown by --help, accepted in the INI file and on the command line.
struct OptionSpec {
  std::string key;           // "fedprox.mu"
  std::string defaultValue;  // as text
  std::string help;
};

struct ExperimentConfig {
  std::string algorithm = "fedavg";
  int clients = 10;
  int rounds = 20;
  std::uint64_t seed = 0;
  TrainConfig train;
  PartitionConfig partition;
  DataConfig data;
  ModelConfig model;
  FlConfig fl;
  EvalConfig eval;
  OutputConfig output;
  CheckpointConfig checkpoint;
  PrivacyConfig privacy;      // privacy.* (core/privacy_config.hpp)
  RobustConfig robust;        // fl.aggregator and its parameters, attack.* (core/robust_config.hpp)
  CompressConfig compress;    // fl.compress and its parameters (core/compress_config.hpp)
  SystemConfig system;        // system.*, fl.deadline_seconds, eval.target_* (core/system_config.hpp)
  OptionValues algo;          // every declared algorithm option, defaults filled in
  std::string resolvedIni;    // the fully resolved configuration as INI text
};

}  // namespace fedsilo
