#include "core/config.hpp"

#include <cctype>
#include <ostream>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fedsilo {

template <>
const std::vector<EnumName<DatasetKind>>& enumNames<DatasetKind>() {
  static const std::vector<EnumName<DatasetKind>> names = {
      {DatasetKind::FashionMnist, "fashion_mnist"}, {DatasetKind::Mnist, "mnist"},
      {DatasetKind::Emnist, "emnist"},              {DatasetKind::Cifar10, "cifar10"},
      {DatasetKind::Leaf, "leaf"},                  {DatasetKind::Synthetic, "synthetic"},
      {DatasetKind::Csv, "csv"},                    {DatasetKind::Hdf5, "hdf5"},
      {DatasetKind::Sequence, "sequence"},          {DatasetKind::Heart, "heart"},
  };
  return names;
}

template <>
const std::vector<EnumName<HeartVariant>>& enumNames<HeartVariant>() {
  static const std::vector<EnumName<HeartVariant>> names = {
      {HeartVariant::PlayerFl, "playerfl", "10 raw features, 5 classes: the PLayer-FL authors' preprocessing"},
      {HeartVariant::Flamby, "flamby", "13 features after one-hot coding, binary target: FLamby's"},
  };
  return names;
}

template <>
const std::vector<EnumName<PartitionScheme>>& enumNames<PartitionScheme>() {
  static const std::vector<EnumName<PartitionScheme>> names = {
      {PartitionScheme::Iid, "iid"},       {PartitionScheme::Dirichlet, "dirichlet"},
      {PartitionScheme::Shards, "shards"}, {PartitionScheme::Labels, "labels"},
      {PartitionScheme::File, "file"},     {PartitionScheme::Natural, "natural"},
  };
  return names;
}

template <>
const std::vector<EnumName<ModelPreset>>& enumNames<ModelPreset>() {
  static const std::vector<EnumName<ModelPreset>> names = {
      {ModelPreset::Mlp, "mlp"},
      {ModelPreset::Logreg, "logreg"},
      {ModelPreset::Svm, "svm"},
      {ModelPreset::CnnMcMahan, "cnn_mcmahan"},
      {ModelPreset::CnnPlayerFl, "cnn_playerfl"},
      {ModelPreset::Lstm, "lstm"},
      {ModelPreset::HeartMlp, "heart_mlp"},
      {ModelPreset::CnnPlayerFlCifar, "cnn_playerfl_cifar"},
      {ModelPreset::TransformerPlayerFl, "transformer_playerfl"},
  };
  return names;
}

template <>
const std::vector<EnumName<LossKind>>& enumNames<LossKind>() {
  static const std::vector<EnumName<LossKind>> names = {
      {LossKind::CrossEntropy, "cross_entropy"}, {LossKind::Hinge, "hinge"}, {LossKind::Focal, "focal"},
      {LossKind::FocalPlayerFl, "focal_playerfl"}};
  return names;
}

template <>
const std::vector<EnumName<PlacementBalance>>& enumNames<PlacementBalance>() {
  static const std::vector<EnumName<PlacementBalance>> names = {
      {PlacementBalance::Samples, "samples", "training samples per rank, any clients together"},
      {PlacementBalance::Clients, "clients", "client count, contiguous ranges"},
  };
  return names;
}

template <>
const std::vector<EnumName<OptimizerKind>>& enumNames<OptimizerKind>() {
  static const std::vector<EnumName<OptimizerKind>> names = {
      {OptimizerKind::Sgd, "sgd"}, {OptimizerKind::Adam, "adam"}, {OptimizerKind::AdamW, "adamw"}};
  return names;
}

template <>
const std::vector<EnumName<OptimizerStateMode>>& enumNames<OptimizerStateMode>() {
  static const std::vector<EnumName<OptimizerStateMode>> names = {
      {OptimizerStateMode::Reset, "reset", "moments restart every round"},
      {OptimizerStateMode::Keep, "keep", "persist per client across rounds"},
  };
  return names;
}

template <>
const std::vector<EnumName<LrSchedule>>& enumNames<LrSchedule>() {
  static const std::vector<EnumName<LrSchedule>> names = {
      {LrSchedule::Constant, "constant"},
      {LrSchedule::Step, "step"},
      {LrSchedule::Exponential, "exponential"},
      {LrSchedule::Cosine, "cosine"},
  };
  return names;
}

template <>
const std::vector<EnumName<Precision>>& enumNames<Precision>() {
  static const std::vector<EnumName<Precision>> names = {
      {Precision::Fp32, "fp32"},
      {Precision::Bf16, "bf16", "bf16 operands, fp32 accumulation (needs AVX512-BF16)"},
  };
  return names;
}

template <>
const std::vector<EnumName<InitScheme>>& enumNames<InitScheme>() {
  static const std::vector<EnumName<InitScheme>> names = {
      {InitScheme::PytorchDefault, "pytorch_default"},
      {InitScheme::KaimingNormal, "kaiming_normal"},
      {InitScheme::KaimingUniform, "kaiming_uniform"},
      {InitScheme::XavierUniform, "xavier_uniform"},
  };
  return names;
}

template <>
const std::vector<EnumName<BiasInit>>& enumNames<BiasInit>() {
  static const std::vector<EnumName<BiasInit>> names = {{BiasInit::Default, "default"}, {BiasInit::Zero, "zero"}};
  return names;
}

template <>
const std::vector<EnumName<NormalizeKind>>& enumNames<NormalizeKind>() {
  static const std::vector<EnumName<NormalizeKind>> names = {{NormalizeKind::None, "none"},
                                                             {NormalizeKind::MeanStd, "mean_std"}};
  return names;
}

template <>
const std::vector<EnumName<AugmentKind>>& enumNames<AugmentKind>() {
  static const std::vector<EnumName<AugmentKind>> names = {{AugmentKind::None, "none"},
                                                           {AugmentKind::Affine, "affine"}};
  return names;
}

template <>
const std::vector<EnumName<ServerOptimizerKind>>& enumNames<ServerOptimizerKind>() {
  static const std::vector<EnumName<ServerOptimizerKind>> names = {
      {ServerOptimizerKind::None, "none", "the aggregate is the new global model"},
      {ServerOptimizerKind::Momentum, "momentum", "FedAvgM"},
      {ServerOptimizerKind::Adam, "adam", "FedAdam"},
      {ServerOptimizerKind::Yogi, "yogi", "FedYogi"},
      {ServerOptimizerKind::Adagrad, "adagrad", "FedAdagrad"},
  };
  return names;
}

template <>
const std::vector<EnumName<PrivacyLevel>>& enumNames<PrivacyLevel>() {
  static const std::vector<EnumName<PrivacyLevel>> names = {
      {PrivacyLevel::None, "none", "off"},
      {PrivacyLevel::Client, "client", "DP-FedAvg: a client's whole data"},
      {PrivacyLevel::Sample, "sample", "DP-SGD inside each silo: one record"},
  };
  return names;
}

template <>
const std::vector<EnumName<NoisePlacement>>& enumNames<NoisePlacement>() {
  static const std::vector<EnumName<NoisePlacement>> names = {
      {NoisePlacement::Server, "server", "central DP"},
      {NoisePlacement::Clients, "clients", "each client adds its share: distributed DP"},
  };
  return names;
}

template <>
const std::vector<EnumName<AggregatorKind>>& enumNames<AggregatorKind>() {
  static const std::vector<EnumName<AggregatorKind>> names = {
      {AggregatorKind::Mean, "mean", "weighted mean (FedAvg)"},
      {AggregatorKind::Median, "median", "coordinate-wise median"},
      {AggregatorKind::TrimmedMean, "trimmed_mean", "coordinate-wise mean without the fl.trim_fraction extremes"},
      {AggregatorKind::Krum, "krum", "the update closest to its n - f - 2 neighbours"},
      {AggregatorKind::MultiKrum, "multi_krum", "mean of the fl.krum_m best Krum scores"},
      {AggregatorKind::Geomed, "geomed", "geometric median (Weiszfeld, RFA)"},
      {AggregatorKind::CenteredClip, "centered_clip", "centered clipping around the last aggregate"},
      {AggregatorKind::NormClip, "norm_clip", "mean of updates clipped to fl.clip_norm"},
  };
  return names;
}

template <>
const std::vector<EnumName<AttackKind>>& enumNames<AttackKind>() {
  static const std::vector<EnumName<AttackKind>> names = {
      {AttackKind::None, "none", "no attack"},
      {AttackKind::LabelFlip, "label_flip", "train on labels c -> C-1-c"},
      {AttackKind::SignFlip, "sign_flip", "send -s Delta"},
      {AttackKind::Scale, "scale", "send s Delta"},
      {AttackKind::Gaussian, "gaussian", "send Gaussian noise of the update's norm"},
      {AttackKind::Alie, "alie", "mean - z std of the honest updates"},
      {AttackKind::Ipm, "ipm", "-epsilon x mean of the honest updates"},
  };
  return names;
}

template <>
const std::vector<EnumName<EvalSelect>>& enumNames<EvalSelect>() {
  static const std::vector<EnumName<EvalSelect>> names = {
      {EvalSelect::Final, "final", "the last evaluation"},
      {EvalSelect::BestVal, "best_val", "each client's evaluation with the best validation score"},
  };
  return names;
}

template <>
const std::vector<EnumName<SelectMetric>>& enumNames<SelectMetric>() {
  static const std::vector<EnumName<SelectMetric>> names = {
      {SelectMetric::Accuracy, "accuracy", "highest validation accuracy"},
      {SelectMetric::Loss, "loss", "lowest validation loss"},
  };
  return names;
}

template <>
const std::vector<EnumName<EvalPoint>>& enumNames<EvalPoint>() {
  static const std::vector<EnumName<EvalPoint>> names = {
      {EvalPoint::AfterAggregation, "after_aggregation", "the model each client uses after the server step"},
      {EvalPoint::AfterLocal, "after_local", "a client that trained: its model right after local training"},
  };
  return names;
}

template <>
const std::vector<EnumName<ClientWeighting>>& enumNames<ClientWeighting>() {
  static const std::vector<EnumName<ClientWeighting>> names = {
      {ClientWeighting::Uniform, "uniform", "every client alike"},
      {ClientWeighting::Samples, "samples", "by training samples"},
  };
  return names;
}

template <>
const std::vector<EnumName<GlobalEvaluation>>& enumNames<GlobalEvaluation>() {
  static const std::vector<EnumName<GlobalEvaluation>> names = {
      {GlobalEvaluation::Rounds, "rounds", "every evaluated round"},
      {GlobalEvaluation::End, "end", "the last round only"},
  };
  return names;
}

#define FEDSILO_ENUM_FUNCTIONS(E) \
  std::ostream& operator<<(std::ostream& os, E value) { return os << nameOf(value); }
FEDSILO_ENUM_FUNCTIONS(DatasetKind)
FEDSILO_ENUM_FUNCTIONS(HeartVariant)
FEDSILO_ENUM_FUNCTIONS(PartitionScheme)
FEDSILO_ENUM_FUNCTIONS(ModelPreset)
FEDSILO_ENUM_FUNCTIONS(LossKind)
FEDSILO_ENUM_FUNCTIONS(PlacementBalance)
FEDSILO_ENUM_FUNCTIONS(OptimizerKind)
FEDSILO_ENUM_FUNCTIONS(OptimizerStateMode)
FEDSILO_ENUM_FUNCTIONS(LrSchedule)
FEDSILO_ENUM_FUNCTIONS(Precision)
FEDSILO_ENUM_FUNCTIONS(InitScheme)
FEDSILO_ENUM_FUNCTIONS(BiasInit)
FEDSILO_ENUM_FUNCTIONS(NormalizeKind)
FEDSILO_ENUM_FUNCTIONS(AugmentKind)
FEDSILO_ENUM_FUNCTIONS(ServerOptimizerKind)
FEDSILO_ENUM_FUNCTIONS(EvalSelect)
FEDSILO_ENUM_FUNCTIONS(SelectMetric)
FEDSILO_ENUM_FUNCTIONS(EvalPoint)
FEDSILO_ENUM_FUNCTIONS(ClientWeighting)
FEDSILO_ENUM_FUNCTIONS(GlobalEvaluation)
FEDSILO_ENUM_FUNCTIONS(PrivacyLevel)
FEDSILO_ENUM_FUNCTIONS(NoisePlacement)
FEDSILO_ENUM_FUNCTIONS(AggregatorKind)
FEDSILO_ENUM_FUNCTIONS(AttackKind)
#undef FEDSILO_ENUM_FUNCTIONS

const std::string& OptionValues::raw(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) throw ConfigError(fmt("option ", key, " is not set"));
  return it->second;
}

double OptionValues::getDouble(const std::string& key, double min, double max) const {
  const double v = parseDouble(raw(key), key);
  if (!(v >= min && v <= max)) throw ConfigError(fmt(key, " = ", raw(key), ": expected a value in [", min, ", ", max, "]"));
  return v;
}

long long OptionValues::getInt(const std::string& key, long long min, long long max) const {
  const long long v = parseInt(raw(key), key);
  if (v < min || v > max) throw ConfigError(fmt(key, " = ", raw(key), ": expected an integer in [", min, ", ", max, "]"));
  return v;
}

bool OptionValues::getBool(const std::string& key) const { return parseBool(key, raw(key)); }

bool parseBool(const std::string& key, const std::string& text) {
  std::string word = trim(text);
  for (char& ch : word) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (word == "true" || word == "1" || word == "yes" || word == "on") return true;
  if (word == "false" || word == "0" || word == "no" || word == "off") return false;
  throw ConfigError(fmt(key, " = ", text, ": expected a boolean: true/false, 1/0, yes/no or on/off (any case)"));
}

std::vector<int> OptionValues::getIntList(const std::string& key, int min, int max) const {
  if (trim(raw(key)).empty()) return {};
  std::vector<int> out = parseIntList(raw(key), key);
  for (int v : out)
    if (v < min || v > max) throw ConfigError(fmt(key, " = ", raw(key), ": each value must be in [", min, ", ", max, "]"));
  return out;
}

}  // namespace fedsilo
