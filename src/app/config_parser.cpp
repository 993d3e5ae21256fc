#include "app/config_parser.hpp"

#include <boost/program_options.hpp>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "app/config_file.hpp"
#include "app/environment_help.hpp"
#include "app/option_sources.hpp"
#include "app/protocol_options.hpp"
#include "app/privacy_options.hpp"
#include "app/raw_values.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "data/loaders.hpp"
#include "fl/algorithm.hpp"
#include "io/reference_reader.hpp"
#include "optim/optimizer.hpp"

namespace po = boost::program_options;

namespace fedsilo {

namespace {

// Every experiment option with its default (as text) and meaning, one table per section, in --help's
// order. Keep docs/cli.md in step. The enumerated options list their values from the one table of each
// enumeration (core/config.hpp).

// The options of what runs and where its results go.
std::vector<Opt> runOptions() {
  return {
      {"algorithm", "fedavg", "federated algorithm (see --help list below)"},
      {"dataset", "fashion_mnist", joinNames<DatasetKind>(" | ")},
      {"model", "mlp", "model preset: " + joinNames<ModelPreset>(" | ")},
      {"clients", "10", "number of clients K (>= 1)"},
      {"rounds", "20",
       "number of communication rounds (>= 1); when not set, a one-shot algorithm runs its own count (gems 1, or 2 "
       "neuron-wise; the baselines 1) and the resolved configuration shows it"},
      {"seed", "0", "experiment seed (>= 0); every random stream is keyed by (seed, client, round, purpose)"},
      {"output", "results.h5",
       "results file (HDF5; missing parent folders are created); written as <output>.partial and renamed when "
       "complete"},
  };
}

// The options of local training.
std::vector<Opt> trainOptions() {
  return {
      {"train.epochs", "1", "local epochs per round (>= 0)"},
      {"train.batch", "32", "mini-batch size (>= 1)"},
      {"train.lr", "0.05", "learning rate (> 0); with train.lr_schedule the lr of round 0"},
      {"train.momentum", "0", "SGD momentum in [0, 1) (train.optimizer = sgd only)"},
      {"train.weight_decay", "0",
       "weight decay (>= 0) with PyTorch's meaning per optimizer: L2 added to the gradient (sgd, adam) or "
       "decoupled p <- p (1 - lr wd) (adamw; PyTorch's AdamW default of 0.01 is not applied)"},
  };
}

// The options of how the training data is split into clients.
std::vector<Opt> partitionOptions() {
  return {
      {"partition.scheme", "dirichlet", joinNames<PartitionScheme>(" | ")},
      {"partition.alpha", "0.5", "Dirichlet concentration (> 0)"},
      {"partition.shards", "200", "number of shards, each of one label (shards scheme; >= the labels present)"},
      {"partition.shards_per_client", "2", "shards per client: N, or min,max for the unbalanced variant"},
      {"partition.file", "", ".npy of integer client ids, one per training sample (file scheme)"},
      {"partition.samples_per_client", "0", "keep at most this many samples per client (0 = all)"},
  };
}

// The options of the data sets.
std::vector<Opt> dataOptions() {
  return {
      {"data.dir", "", "dataset directory"},  // help completed by helpText: the per-dataset default
      {"data.file", "", "data file for the csv and hdf5 datasets"},
      {"data.split", "0.8,0.1,0.1",
       "per-client train,val,test fractions (sum 1; zeros allowed: metrics needing that split are NaN)"},
      {"data.alpha", "1", "Synthetic(alpha, beta): alpha"},
      {"data.beta", "1", "Synthetic(alpha, beta): beta"},
      {"data.users", "100", "synthetic/sequence: number of users"},
      {"data.label_column", "label", "csv: label column name"},
      {"data.client_column", "", "csv: optional client column (natural partition)"},
      {"data.seq_length", "20", "sequence/leaf text: tokens per sample"},
      {"data.vocab_size", "50", "sequence: vocabulary size"},
      {"data.samples_per_user", "200", "sequence: samples per user"},
      {"data.classes", "0", "sequence: number of classes (0 = default)"},
      {"data.max_classes", "100000",
       "largest number of classes of a dataset read from files: every label must lie in [0, N); a label outside "
       "it, or more distinct labels, is a data error (exit 3)"},
  };
}

// The options of the model.
std::vector<Opt> modelOptions() {
  return {
      {"model.hidden", "200,200", "mlp hidden layer widths"},
      {"model.dropout", "0", "dropout probability after hidden layers, in [0, 1)"},
      {"model.loss", "", "loss override: " + joinNames<LossKind>(" | ") + " (default: the preset's)"},
      {"model.focal_gamma", "2", "focal loss gamma (>= 0)"},
      {"model.embed_dim", "32", "lstm: embedding dimension"},
      {"model.lstm_hidden", "64", "lstm: hidden units per layer"},
      {"model.lstm_layers", "2", "lstm: stacked layers"},
  };
}

// The options of the federation: participation, placement, the server optimizer.
std::vector<Opt> federationOptions() {
  return {
      {"fl.clients_per_round", "0", "clients sampled per round (0 = all)"},
      {"fl.dropout", "0", "probability that a selected client drops out of a round, in [0, 1)"},
      {"fl.skip_diverged", "false", "drop a client update whose loss or parameters are NaN/Inf instead of failing"},
      {"fl.placement", "samples",
       "clients -> ranks, contiguous ranges balancing: " + joinNames<PlacementBalance>(" | ", true) +
           "; results do not depend on it"},
      {"fl.server_optimizer", "none",
       "server optimizer on the aggregate, Delta = aggregate - global (FedOpt, Reddi et al. 2021, no bias "
       "correction): " + joinNames<ServerOptimizerKind>(" | ", true) +
           "; only for algorithms that average models"},
      {"fl.server_lr", "1", "server learning rate eta (> 0) of fl.server_optimizer"},
      {"fl.server_momentum", "0.9", "fl.server_optimizer = momentum: beta in [0, 1) of m <- beta m + Delta"},
      {"fl.server_beta1", "0.9", "adam, yogi, adagrad: first-moment decay beta1 in [0, 1)"},
      {"fl.server_beta2", "0.99", "adam, yogi: second-moment decay beta2 in [0, 1)"},
      {"fl.server_tau", "0.001",
       "adam, yogi, adagrad: adaptivity tau > 0 (step eta m / (sqrt(v) + tau), v from tau^2)"},
  };
}

// The options of evaluation and the model each client's summary uses.
std::vector<Opt> evaluationOptions() {
  return {
      {"eval.every", "1", "evaluate every N rounds (the last round always)"},
      {"eval.batch", "256", "evaluation batch size"},
      {"eval.select", "final",
       "model each client's summary uses: " + joinNames<EvalSelect>(" | ", true) +
           " (best_val needs validation samples, data.split)"},
      {"eval.select_metric", "accuracy", "eval.select = best_val: " + joinNames<SelectMetric>(" | ", true)},
      {"eval.point", "after_aggregation",
       "when clients are evaluated: " + joinNames<EvalPoint>(" | ", true) +
           "; a client that did not train that round is evaluated after the server step"},
      {"eval.client_weighting", "uniform",
       "weights of the client mean in /summary/mean and /summary/mean_f1: " + joinNames<ClientWeighting>(" | ", true)},
  };
}

// The options of extra outputs.
std::vector<Opt> outputOptions() {
  return {
      {"output.client_models", "false", "also write every client's final model to /model/clients"},
      {"output.jsonl", "false",
       "also write <output>.jsonl: one JSON object per round, flushed as the round ends (tail -f it, or read it "
       "without h5py)"},
      {"output.progress_seconds", "10",
       "print a progress line during a round at most this often, in seconds (0 = never)"},
  };
}

// The options of checkpoints.
std::vector<Opt> checkpointOptions() {
  return {
      {"checkpoint.every", "0", "write <output>.ckpt every N rounds (0: only on SIGTERM/SIGUSR1)"},
  };
}

const std::vector<Opt>& coreOptions() {
  static const std::vector<Opt> opts = [] {
    std::vector<Opt> all;
    for (auto&& section : {runOptions(), trainOptions(), optimizerOptions(), partitionOptions(), dataOptions(),
                           inputOptions(), modelOptions(), initOptions(), federationOptions(), evaluationOptions(),
                           outputOptions(), checkpointOptions()})
      all.insert(all.end(), section.begin(), section.end());
    return all;
  }();
  return opts;
}

// An option's help with its default spelled out where Boost shows none (an empty default string).
std::string helpText(const std::string& key, const std::string& def, const std::string& help) {
  if (key == "data.dir")
    return help + " (default: the dataset's standard location: " + defaultDataDir(DatasetKind::FashionMnist) +
           " for fashion_mnist; none for the other datasets, which need it)";
  if (!def.empty() || help.find("(default:") != std::string::npos) return help;
  return help + " (default: none)";
}

std::string sectionOf(const std::string& key) {
  const auto dot = key.find('.');
  return dot == std::string::npos ? "" : key.substr(0, dot);
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
  m.embedDim = raw.smallInteger("model.embed_dim", 1, 100000);
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
}

// eval.*: the evaluation rules (fl/eval_selection.hpp). best_val compares validation scores, so the
// clients need a validation split.
void readEvalRules(const RawValues& raw, const DataConfig& data, EvalConfig& e) {
  e.every = raw.smallInteger("eval.every", 1, 100000000);
  e.batch = raw.smallInteger("eval.batch", 1, 1 << 20);
  e.select = raw.choice<EvalSelect>("eval.select");
  e.selectMetric = raw.choice<SelectMetric>("eval.select_metric");
  e.point = raw.choice<EvalPoint>("eval.point");
  e.clientWeighting = raw.choice<ClientWeighting>("eval.client_weighting");
  if (e.select == EvalSelect::BestVal && !(data.split[1] > 0.0))
    throw ConfigError(fmt("eval.select = best_val compares validation scores, but data.split = ",
                          raw.text("data.split"),
                          " gives the clients no validation samples (set a validation fraction, or eval.select = "
                          "final)"));
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

// The experiment's options, every value's type and range and the rules between them; not the
// algorithm's options nor the privacy options.
void readExperimentOptions(const RawValues& raw, ExperimentConfig& c) {
  readTopLevel(raw, c);
  readTraining(raw, c.train);
  readPartition(raw, c.partition);
  readData(raw, c.data);
  readModel(raw, c.model);
  readRun(raw, c);
}

ExperimentConfig toConfig(std::map<std::string, std::string>& values, bool roundsGiven) {
  const RawValues raw(values);
  ExperimentConfig c;
  readExperimentOptions(raw, c);
  readAlgorithm(values, roundsGiven, c);
  c.privacy = readPrivacy(values, c);
  // DP-SGD's Poisson batches are gathered without augmentation (its privacy analysis counts each record once).
  if (c.privacy.sampleLevel() && c.data.augment != AugmentKind::None)
    throw ConfigError(fmt("data.augment = ", raw.text("data.augment"),
                          ": not with privacy.level = sample (DP-SGD's batches are not augmented); expected none"));
  return c;
}

// The fully resolved configuration as INI text: top-level keys, then one [section] per section.
std::string resolvedIni(const std::map<std::string, std::string>& values) {
  std::ostringstream os;
  os << "# fedsilo " << FEDSILO_VERSION << " resolved configuration\n";
  for (const auto& [key, value] : values)
    if (sectionOf(key).empty()) os << key << " = " << value << "\n";
  std::string current;
  for (const auto& [key, value] : values) {
    const std::string section = sectionOf(key);
    if (section.empty()) continue;
    if (section != current) {
      os << "\n[" << section << "]\n";
      current = section;
    }
    os << key.substr(section.size() + 1) << " = " << value << "\n";
  }
  return os.str();
}

// The options fedsilo accepts: generic (command line only) and the experiment's and algorithms'
// (command line and INI file), with the default of each of the latter as text.
struct OptionSet {
  po::options_description generic{"Generic options"};
  po::options_description experiment{"Experiment options (INI: top-level keys, or key = value under [section])"};
  po::options_description algorithm{"Algorithm options"};
  po::options_description privacy{"Privacy options (docs/privacy.md)"};
  po::options_description all, inFile;
  std::vector<std::pair<std::string, std::string>> defaults;

  OptionSet() {
    generic.add_options()("help,h", "print this help and exit")("version", "print the version and exit")(
        "config,c", po::value<std::string>(), "INI configuration file")(
        "resume", "continue from <output>.ckpt if it exists")(
        "quiet,q", "print nothing but errors: no start-up line, round lines, progress, decisions or warnings; the "
                   "error line of a failed run still goes to standard error")(
        "dry-run", "print the configuration fully resolved, then make the run's start-up checks without training "
                   "or writing anything (data, partition file, alpha_fedavg.reference and, with --resume, the "
                   "checkpoint read and checked; the output folder writable; no other run holding the output) and "
                   "exit with the code the run would (0 when it can start)");
    for (const auto& o : coreOptions()) add(experiment, o.key, o.def, o.help);
    for (const auto& o : allAlgorithmOptions()) add(algorithm, o.key, o.defaultValue, o.help);
    for (const auto& o : privacyOptions()) add(privacy, o.key, o.defaultValue, o.help);
    all.add(generic).add(experiment).add(algorithm).add(privacy);
    inFile.add(experiment).add(algorithm).add(privacy);
  }

 private:
  void add(po::options_description& group, const std::string& key, const std::string& def, const std::string& help) {
    group.add_options()(key.c_str(), po::value<std::string>()->default_value(def), helpText(key, def, help).c_str());
    defaults.emplace_back(key, def);
  }
};

std::string usageText(const OptionSet& options) {
  std::ostringstream os;
  os << "fedsilo " << FEDSILO_VERSION << ": cross-silo federated learning on MPI\n\n"
     << "usage: mpirun -n P fedsilo --config configs/X.ini [--section.key value ...]\n"
     << "       fedsilo epsilon --sample_rate Q --noise_multiplier Z --steps T --delta D   (the privacy accountant\n"
     << "       alone: no MPI, no training; fedsilo epsilon --help)\n\n"
     << options.all << "\nAlgorithms:\n";
  for (const auto& e : algorithmRegistry()) os << "  " << e.name << ": " << e.summary << "\n";
  os << "\nBoolean options take true/false, 1/0, yes/no or on/off in any case (the resolved configuration says true or\n"
     << "false). The INI file must be text (UTF-8; a byte-order mark at its start is skipped).\n"
     << "\nAn INI section [SECTION @ ALGORITHM, ...] (e.g. [train @ pfedme]) holds SECTION's keys for those\n"
     << "algorithms only; the command line wins over it, it wins over the plain sections. SECTION is one of the\n"
     << "experiment sections; the scoped sections of algorithms that do not run are checked as well.\n";
  os << "\nExit codes: 0 success, 2 bad command line or configuration, 3 bad or missing input data, 1 other errors,\n"
     << "75 interrupted by SIGTERM/SIGUSR1 after writing <output>.ckpt (run again with --resume). mpirun itself\n"
     << "exits 1 when it gets SIGTERM or Ctrl-C: send it SIGUSR1, or run through jobs/local/run.sh (docs/hpc.md).\n";
  os << "\n" << environmentHelp();
  return os.str();
}

// Boolean options (those whose default is true or false) are stored as true or false, whichever of
// the accepted spellings was given; a value that is none of them is an error, also for the options of
// an algorithm that is not selected.
void normaliseBooleans(const OptionSet& options, std::map<std::string, std::string>& values) {
  for (const auto& [key, def] : options.defaults)
    if (def == "true" || def == "false") values[key] = parseBool(key, values[key]) ? "true" : "false";
}

// The sections that can be scoped to an algorithm: those of the experiment options.
std::set<std::string> scopableSections() {
  std::set<std::string> sections;
  for (const auto& o : coreOptions())
    if (!sectionOf(o.key).empty()) sections.insert(sectionOf(o.key));
  return sections;
}

// Every experiment and algorithm option as text (the command line's, else the file's, else the
// default), data.dir resolved, booleans normalised.
std::map<std::string, std::string> resolvedValues(const OptionSet& options, const OptionTexts& file,
                                                  const OptionTexts& commandLine) {
  std::map<std::string, std::string> values = layeredValues(options.defaults, file, commandLine);
  // Fully resolved: an empty data.dir becomes the dataset's default directory (the one the loader
  // reads), so the stored configuration and the --resume comparison name it. An unknown dataset is
  // reported by toConfig.
  if (trim(values["data.dir"]).empty())
    if (const std::optional<DatasetKind> dataset = findEnum<DatasetKind>(values["dataset"]))
      values["data.dir"] = defaultDataDir(*dataset);
  normaliseBooleans(options, values);
  return values;
}

// Sections scoped to algorithms that do not run are read as those algorithms' runs with the same
// command line would read them: every value's type and range and the rules between the experiment's
// options (the algorithm's own checks are made when it runs).
void checkOtherScopes(const OptionSet& options, const ConfigFileValues& file, const OptionTexts& commandLine,
                      const std::string& running) {
  std::set<std::string> others;
  for (const auto& s : file.scoped) others.insert(s.algorithms.begin(), s.algorithms.end());
  others.erase(running);
  for (const auto& algorithm : others) {
    std::map<std::string, std::string> values = resolvedValues(options, file.forAlgorithm(algorithm), commandLine);
    values["algorithm"] = algorithm;
    try {
      ExperimentConfig c;
      readExperimentOptions(RawValues(values), c);
    } catch (const ConfigError& e) {
      throw scopedError(file, *scopeOfError(file, commandLine, algorithm, e.what(), true),
                        fmt("as ", algorithm, " would run: ", e.what()));
    }
  }
}

// The configuration that runs; an error about a key of a section scoped to its algorithm names it.
ExperimentConfig runConfig(const ConfigFileValues& file, const OptionTexts& commandLine,
                           std::map<std::string, std::string>& values) {
  const std::string algorithm = trim(values.at("algorithm"));
  try {
    return toConfig(values, commandLine.count("rounds") || file.plain.count("rounds"));
  } catch (const ConfigError& e) {
    if (const ScopedSection* s = scopeOfError(file, commandLine, algorithm, e.what(), false))
      throw scopedError(file, *s, e.what());
    throw;
  }
}

}  // namespace

ParseOutcome parseArguments(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"fedsilo"};
  for (const auto& a : args) argv.push_back(a.c_str());
  return parseCommandLine(static_cast<int>(argv.size()), argv.data());
}

std::map<std::string, std::string> optionDefaults() {
  const OptionSet options;
  return {options.defaults.begin(), options.defaults.end()};
}

ParseOutcome parseCommandLine(int argc, const char* const* argv) {
  const OptionSet options;
  ParseOutcome out;
  po::variables_map vm;
  try {
    storeCommandLine(argc, argv, options.all, vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw ConfigError(fmt("command line/config: ", e.what()));
  }
  if (vm.count("help") || vm.count("version")) {
    out.action = vm.count("help") ? ParseOutcome::Action::Help : ParseOutcome::Action::Version;
    out.text = vm.count("help") ? usageText(options) : std::string("fedsilo ") + FEDSILO_VERSION + "\n";
    return out;
  }
  ConfigFileValues file;
  if (vm.count("config")) file = readConfigFile(vm["config"].as<std::string>(), options.inFile, scopableSections());
  const OptionTexts commandLine = commandLineValues(vm, options.defaults);
  const std::string algorithm = trim(layeredValues(options.defaults, file.plain, commandLine).at("algorithm"));
  std::map<std::string, std::string> values = resolvedValues(options, file.forAlgorithm(algorithm), commandLine);
  out.config = runConfig(file, commandLine, values);
  checkOtherScopes(options, file, commandLine, algorithm);
  out.config.checkpoint.resume = vm.count("resume") != 0;
  out.config.output.quiet = vm.count("quiet") != 0;
  out.config.resolvedIni = resolvedIni(values);
  if (vm.count("dry-run")) {
    out.action = ParseOutcome::Action::DryRun;
    out.text = out.config.resolvedIni;
  }
  return out;
}

}  // namespace fedsilo
