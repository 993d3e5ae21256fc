#include "app/config_reader.hpp"

#include <cmath>

#include "app/compress_options.hpp"
#include "app/experiment_options.hpp"
#include "app/privacy_options.hpp"
#include "app/robust_options.hpp"
#include "app/system_options.hpp"
#include "app/async_options.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "data/loaders.hpp"
#include "fl/algorithm.hpp"
#include "io/reference_reader.hpp"
#include "optim/optimizer.hpp"

namespace fedsilo {

namespace {

const std::string& defaultText(const std::string& key) {
  for (const Opt& o : experimentOptions())
    if (o.key == key) return o.def;
  FEDSILO_ASSERT(false, "no experiment option ", key);
  static const std::string none;
  return none;
}

// Whether `key` was set to something other than its default (as text, else as numbers: 0.10 is 0.1).
bool changed(const RawValues& raw, const std::string& key) {
  const std::string value = raw.trimmed(key), def = trim(defaultText(key));
  if (value == def) return false;
  try {
    return parseDoubleList(value, key) != parseDoubleList(def, key);
  } catch (const ConfigError&) {
    return true;
  }
}

// An option that has an effect only under another setting is refused when changed where it has none,
// as a typo or a forgotten switch would otherwise pass silently.
void onlyWith(const RawValues& raw, const std::string& key, bool applies, const std::string& setting) {
  if (!applies && changed(raw, key))
    throw ConfigError(fmt(key, " = ", raw.text(key), ": applies with ", setting, " only"));
}

void readTopLevel(const RawValues& raw, ExperimentConfig& c) {
  c.algorithm = raw.trimmed("algorithm");
  c.data.dataset = raw.choice<DatasetKind>("dataset");
  c.model.name = raw.choice<ModelPreset>("model");
  c.clients = raw.smallInteger("clients", 1, 1000000);
  c.rounds = raw.smallInteger("rounds", 1, 100000000);
  c.seed = static_cast<std::uint64_t>(raw.integer("seed", 0, (1LL << 62)));
  c.output.path = raw.trimmed("output");
  if (c.output.path.empty()) throw ConfigError("output = '': expected a file path");
}

void readSchedule(const RawValues& raw, TrainConfig& t) {
  t.lrSchedule = raw.choice<LrSchedule>("train.lr_schedule");
  t.lrStepRounds = raw.smallInteger("train.lr_step_rounds", 1, 100000000);
  t.lrGamma = raw.number("train.lr_gamma", 0.0, 1.0, true);
  t.lrMin = raw.number("train.lr_min", 0.0, 1e6);
  if (t.lrMin > t.lr)
    throw ConfigError(fmt("train.lr_min = ", raw.text("train.lr_min"), ": expected a number in [0, train.lr = ",
                          raw.text("train.lr"), "]"));
  const LrSchedule k = t.lrSchedule;
  onlyWith(raw, "train.lr_step_rounds", k == LrSchedule::Step, "train.lr_schedule = step");
  onlyWith(raw, "train.lr_gamma", k == LrSchedule::Step || k == LrSchedule::Exponential,
           "train.lr_schedule = step or exponential");
  onlyWith(raw, "train.lr_min", k == LrSchedule::Cosine, "train.lr_schedule = cosine");
}

void readTraining(const RawValues& raw, TrainConfig& t) {
  t.epochs = raw.smallInteger("train.epochs", 0, 100000);
  t.batch = raw.smallInteger("train.batch", 1, 1 << 20);
  t.lr = raw.number("train.lr", 0.0, 1e6, true);
  t.momentum = raw.number("train.momentum", 0.0, 1.0, false, true);
  t.weightDecay = raw.number("train.weight_decay", 0.0, 1e6);
  t.optimizer = raw.choice<OptimizerKind>("train.optimizer");
  t.beta1 = raw.number("train.beta1", 0.0, 1.0, false, true);
  t.beta2 = raw.number("train.beta2", 0.0, 1.0, false, true);
  t.eps = raw.number("train.eps", 0.0, 1.0);
  t.amsgrad = raw.boolean("train.amsgrad");
  t.nesterov = raw.boolean("train.nesterov");
  t.optimizerState = raw.choice<OptimizerStateMode>("train.optimizer_state");
  t.precision = raw.choice<Precision>("train.precision");
  validateOptimizer(t);
  readSchedule(raw, t);
}

void readPartition(const RawValues& raw, PartitionConfig& p) {
  p.scheme = raw.choice<PartitionScheme>("partition.scheme");
  p.alpha = raw.number("partition.alpha", 0.0, 1e9, true);
  p.shards = raw.smallInteger("partition.shards", 1, 100000000);
  const std::string& perClient = raw.text("partition.shards_per_client");
  const std::vector<int> range = parseIntList(perClient, "partition.shards_per_client");
  if (range.empty() || range.size() > 2 || range.front() < 1 || range.back() < range.front())
    throw ConfigError(fmt("partition.shards_per_client = ", perClient, ": expected N or min,max with 1 <= min <= max"));
  p.shardsPerClientMin = range.front();
  p.shardsPerClientMax = range.back();
  p.file = raw.trimmed("partition.file");
  if (p.scheme == PartitionScheme::File && p.file.empty())
    throw ConfigError("partition.scheme = file needs partition.file (a .npy of client ids)");
  p.samplesPerClient = raw.integer("partition.samples_per_client", 0, 1LL << 40);
}

std::vector<double> readSplit(const RawValues& raw) {
  std::vector<double> split = parseDoubleList(raw.text("data.split"), "data.split");
  double sum = 0.0;
  bool ok = split.size() == 3;
  for (double fraction : split) {
    ok = ok && std::isfinite(fraction) && fraction >= 0.0;
    sum += fraction;
  }
  if (!ok || std::fabs(sum - 1.0) > 1e-6 || split[0] <= 0.0)
    throw ConfigError(fmt("data.split = ", raw.text("data.split"),
                          ": expected three non-negative fractions train,val,test summing to 1 with train > 0"));
  return split;
}

// data.mean and data.std: both or neither, only with data.normalize = mean_std.
void readNormalization(const RawValues& raw, DataConfig& d) {
  d.normalize = raw.choice<NormalizeKind>("data.normalize");
  const auto list = [&](const char* key) {
    return raw.trimmed(key).empty() ? std::vector<double>{} : parseDoubleList(raw.text(key), key);
  };
  d.mean = list("data.mean");
  d.std = list("data.std");
  if ((d.mean.empty() || d.std.empty()) && !(d.mean.empty() && d.std.empty()))
    throw ConfigError(fmt(d.mean.empty() ? "data.std = " : "data.mean = ",
                          raw.text(d.mean.empty() ? "data.std" : "data.mean"),
                          ": data.mean and data.std go together (set both, or neither for the data's own)"));
  if (!d.mean.empty() && d.normalize == NormalizeKind::None)
    throw ConfigError(fmt("data.mean = ", raw.text("data.mean"), ": applies with data.normalize = mean_std only"));
  for (double v : d.mean)
    if (!std::isfinite(v)) throw ConfigError(fmt("data.mean = ", raw.text("data.mean"), ": expected finite numbers"));
  for (double v : d.std)
    if (!(std::isfinite(v) && v > 0.0))
      throw ConfigError(fmt("data.std = ", raw.text("data.std"), ": expected finite numbers > 0"));
}

void readAugmentation(const RawValues& raw, DataConfig& d) {
  d.augment = raw.choice<AugmentKind>("data.augment");
  d.augmentRotation = raw.number("data.augment_rotation", 0.0, 180.0);
  d.augmentTranslate = raw.number("data.augment_translate", 0.0, 1.0, false, true);
  const std::vector<double> scale = parseDoubleList(raw.text("data.augment_scale"), "data.augment_scale");
  if (scale.empty() || scale.size() > 2 || !(scale.front() > 0.0) || !(scale.back() >= scale.front()) ||
      !std::isfinite(scale.back()) || scale.back() > 100.0)
    throw ConfigError(fmt("data.augment_scale = ", raw.text("data.augment_scale"),
                          ": expected one factor or min,max with 0 < min <= max <= 100"));
  d.augmentScaleMin = scale.front();
  d.augmentScaleMax = scale.back();
  d.augmentFlip = raw.boolean("data.augment_flip");
  d.augmentCropPadding = raw.smallInteger("data.augment_crop_padding", 0, 10000);
  for (const char* key : {"data.augment_rotation", "data.augment_translate", "data.augment_scale",
                          "data.augment_crop_padding"})
    onlyWith(raw, key, d.augment != AugmentKind::None, "data.augment = affine");
  if (d.augmentFlip && d.augment == AugmentKind::None)
    throw ConfigError(
        fmt("data.augment_flip = ", raw.text("data.augment_flip"), ": applies with data.augment = affine only"));
}

void readData(const RawValues& raw, DataConfig& d) {
  d.dir = raw.trimmed("data.dir");
  d.file = raw.trimmed("data.file");
  d.split = readSplit(raw);
  d.alpha = raw.number("data.alpha", 0.0, 1e6);
  d.beta = raw.number("data.beta", 0.0, 1e6);
  d.users = raw.smallInteger("data.users", 1, 1000000);
  d.labelColumn = raw.trimmed("data.label_column");
  d.clientColumn = raw.trimmed("data.client_column");
  d.heartVariant = raw.choice<HeartVariant>("data.heart_variant");
  onlyWith(raw, "data.heart_variant", d.dataset == DatasetKind::Heart, "dataset = heart");
  d.seqLength = raw.smallInteger("data.seq_length", 1, 100000);
  d.vocabSize = raw.smallInteger("data.vocab_size", 4, 10000000);
  d.samplesPerUser = raw.smallInteger("data.samples_per_user", 1, 10000000);
  d.numClasses = raw.smallInteger("data.classes", 0, 100000);
  d.maxClasses = raw.smallInteger("data.max_classes", 2, 2147483647);
  d.limit = raw.integer("data.limit", 0, 1LL << 40);
  readNormalization(raw, d);
  readAugmentation(raw, d);
}

void readModel(const RawValues& raw, ModelConfig& m) {
  m.hidden = parseIntList(raw.text("model.hidden"), "model.hidden");
  for (int width : m.hidden)
    if (width < 1 || width > 1000000)
      throw ConfigError(fmt("model.hidden = ", raw.text("model.hidden"), ": widths must be in [1, 1000000]"));
  m.dropout = raw.number("model.dropout", 0.0, 1.0, false, true);
  if (!raw.trimmed("model.loss").empty()) m.loss = raw.choice<LossKind>("model.loss");
  m.focalGamma = raw.number("model.focal_gamma", 0.0, 100.0);
  if (!raw.trimmed("model.focal_alpha").empty()) {
    m.focalAlpha = parseDoubleList(raw.text("model.focal_alpha"), "model.focal_alpha");
    for (double a : m.focalAlpha)
      if (!(a >= 0.0) || !std::isfinite(a))
        throw ConfigError(fmt("model.focal_alpha = ", raw.text("model.focal_alpha"), ": weight ", a,
                              " is not a finite value >= 0"));
    if (m.loss != LossKind::Focal && m.loss != LossKind::FocalPlayerFl)
      throw ConfigError(fmt("model.focal_alpha = ", raw.text("model.focal_alpha"),
                            ": applies with model.loss = focal or focal_playerfl only"));
    if (m.loss == LossKind::FocalPlayerFl)
      for (double a : m.focalAlpha)
        if (a > 1.0)
          throw ConfigError(fmt("model.focal_alpha = ", raw.text("model.focal_alpha"), ": weight ", a,
                                " exceeds 1 (model.loss = focal_playerfl weights the other classes by 1 - alpha)"));
  }
  m.embedDim = raw.smallInteger("model.embed_dim", 1, 100000);
  m.maxLen = raw.smallInteger("model.max_len", 0, 1000000);
  m.lstmHidden = raw.smallInteger("model.lstm_hidden", 1, 100000);
  m.lstmLayers = raw.smallInteger("model.lstm_layers", 1, 16);
  m.initScheme = raw.choice<InitScheme>("model.init_scheme");
  m.initBias = raw.choice<BiasInit>("model.init_bias");
  m.initFile = raw.trimmed("model.init");
}

void readServerOptimizer(const RawValues& raw, ServerOptimizerConfig& s) {
  s.kind = raw.choice<ServerOptimizerKind>("fl.server_optimizer");
  s.lr = raw.number("fl.server_lr", 0.0, 1e6, true);
  s.momentum = raw.number("fl.server_momentum", 0.0, 1.0, false, true);
  s.beta1 = raw.number("fl.server_beta1", 0.0, 1.0, false, true);
  s.beta2 = raw.number("fl.server_beta2", 0.0, 1.0, false, true);
  s.tau = raw.number("fl.server_tau", 0.0, 1e6, true);
  using K = ServerOptimizerKind;
  const bool adaptive = s.kind == K::Adam || s.kind == K::Yogi || s.kind == K::Adagrad;
  onlyWith(raw, "fl.server_lr", s.kind != K::None, "a server optimizer (fl.server_optimizer)");
  onlyWith(raw, "fl.server_momentum", s.kind == K::Momentum, "fl.server_optimizer = momentum");
  onlyWith(raw, "fl.server_beta1", adaptive, "fl.server_optimizer = adam, yogi or adagrad");
  onlyWith(raw, "fl.server_tau", adaptive, "fl.server_optimizer = adam, yogi or adagrad");
  onlyWith(raw, "fl.server_beta2", s.kind == K::Adam || s.kind == K::Yogi, "fl.server_optimizer = adam or yogi");
}

// eval.*: the evaluation rules (fl/eval_selection.hpp). best_val compares validation scores, so the
// clients need a validation split.
void readEvalRules(const RawValues& raw, const DataConfig& data, EvalConfig& e) {
  e.every = raw.smallInteger("eval.every", 1, 100000000);
  e.batch = raw.smallInteger("eval.batch", 1, 1 << 20);
  e.select = raw.choice<EvalSelect>("eval.select");
  e.selectMetric = raw.choice<SelectMetric>("eval.select_metric");
  onlyWith(raw, "eval.select_metric", e.select == EvalSelect::BestVal, "eval.select = best_val");
  e.point = raw.choice<EvalPoint>("eval.point");
  e.clientWeighting = raw.choice<ClientWeighting>("eval.client_weighting");
  e.global = raw.choice<GlobalEvaluation>("eval.global");
  if (e.select == EvalSelect::BestVal && !(data.split[1] > 0.0))
    throw ConfigError(fmt("eval.select = best_val compares validation scores, but data.split = ",
                          raw.text("data.split"),
                          " gives the clients no validation samples (set a validation fraction, or eval.select = "
                          "final)"));
}

// dataset = heart: the silos are the four hospitals of the UCI files (data/heart_disease/README.md).
void requireHospitalSilos(const RawValues& raw, const ExperimentConfig& c) {
  if (c.data.dataset != DatasetKind::Heart) return;
  if (c.partition.scheme != PartitionScheme::Natural)
    throw ConfigError(fmt("partition.scheme = ", raw.text("partition.scheme"),
                          ": dataset = heart needs partition.scheme = natural (silo k is hospital k)"));
  if (c.clients != kHeartHospitals)
    throw ConfigError(fmt("clients = ", raw.text("clients"), ": dataset = heart has exactly ", kHeartHospitals,
                          " silos (Cleveland, Hungary, Switzerland, Long Beach VA); expected clients = ",
                          kHeartHospitals));
}

void readRun(const RawValues& raw, ExperimentConfig& c) {
  c.fl.clientsPerRound = raw.smallInteger("fl.clients_per_round", 0, 1000000);
  c.fl.dropout = raw.number("fl.dropout", 0.0, 1.0, false, true);
  c.fl.skipDiverged = raw.boolean("fl.skip_diverged");
  c.fl.placement = raw.choice<PlacementBalance>("fl.placement");
  readServerOptimizer(raw, c.fl.serverOptimizer);
  readEvalRules(raw, c.data, c.eval);
  c.output.clientModels = raw.boolean("output.client_models");
  c.output.jsonl = raw.boolean("output.jsonl");
  c.output.progressSeconds = raw.number("output.progress_seconds", 0.0, 1e9);
  c.checkpoint.every = raw.smallInteger("checkpoint.every", 0, 100000000);
}

// The algorithm's name and its own options: validated now, before any data is read. A one-shot
// algorithm runs its own number of rounds when `rounds` was not given, and `values` (the resolved
// configuration) then shows that count; an explicit other count is its factory's error.
void readAlgorithm(std::map<std::string, std::string>& values, bool roundsGiven, ExperimentConfig& c) {
  const AlgorithmEntry* entry = findAlgorithm(c.algorithm);
  if (!entry) makeAlgorithm(c);  // throws the ConfigError listing the algorithms
  for (const auto& o : allAlgorithmOptions()) c.algo.set(o.key, values.at(o.key));
  // Options that name files are resolved here, at the application level, so that algorithms never do I/O.
  resolveAlphaFedAvgReference(c.algo);
  if (!roundsGiven && entry->oneShotRounds) {
    c.rounds = entry->oneShotRounds(c);
    values["rounds"] = std::to_string(c.rounds);
  }
  makeAlgorithm(c);  // every algorithm checks its own options
}

}  // namespace

// The experiment's options, every value's type and range and the rules between them; not the
// algorithm's options nor the privacy options.
void readExperimentOptions(const RawValues& raw, ExperimentConfig& c) {
  readTopLevel(raw, c);
  readTraining(raw, c.train);
  readPartition(raw, c.partition);
  readData(raw, c.data);
  readModel(raw, c.model);
  requireHospitalSilos(raw, c);
  readRun(raw, c);
}

ExperimentConfig toConfig(std::map<std::string, std::string>& values, bool roundsGiven) {
  const RawValues raw(values);
  ExperimentConfig c;
  readExperimentOptions(raw, c);
  readAlgorithm(values, roundsGiven, c);
  c.privacy = readPrivacy(values, c);
  c.robust = readRobust(values, c);
  c.system = readSystem(values, c);
  c.compress = readCompress(values, c);  // after the system model, which refuseUnsoundCompression checks
  readAsyncOptions(values, c);           // last: it checks the other sections against an asynchronous algorithm
  // DP-SGD's Poisson batches are gathered without augmentation (its privacy analysis counts each record once).
  if (c.privacy.sampleLevel() && c.data.augment != AugmentKind::None)
    throw ConfigError(fmt("data.augment = ", raw.text("data.augment"),
                          ": not with privacy.level = sample (DP-SGD's batches are not augmented); expected none"));
  return c;
}

}  // namespace fedsilo
