#include "app/config_parser.hpp"

#include <boost/program_options.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "data/loaders.hpp"
#include "fl/algorithm.hpp"
#include "io/reference_reader.hpp"
#include "nn/presets.hpp"

namespace po = boost::program_options;

namespace fedsilo {

namespace {

struct Opt {
  const char* key;
  const char* def;
  const char* help;
};

// Every experiment option with its default (as text) and meaning. Keep docs/cli.md in step.
const std::vector<Opt>& coreOptions() {
  static const std::vector<Opt> opts = {
      {"algorithm", "fedavg", "federated algorithm (see --help list below)"},
      {"dataset", "fashion_mnist", "fashion_mnist | mnist | emnist | cifar10 | leaf | synthetic | csv | hdf5 | sequence"},
      {"model", "mlp", "model preset: mlp | logreg | svm | cnn_mcmahan | cnn_playerfl | lstm"},
      {"clients", "10", "number of clients K (>= 1)"},
      {"rounds", "20", "number of communication rounds (>= 1)"},
      {"seed", "0", "experiment seed (>= 0); every random stream is keyed by (seed, client, round, purpose)"},
      {"output", "results.h5", "results file (HDF5); written as <output>.partial and renamed when complete"},
      {"train.epochs", "1", "local epochs per round (>= 0)"},
      {"train.batch", "32", "mini-batch size (>= 1)"},
      {"train.lr", "0.05", "learning rate (> 0)"},
      {"train.momentum", "0", "SGD momentum in [0, 1)"},
      {"train.weight_decay", "0", "L2 weight decay (>= 0)"},
      {"partition.scheme", "dirichlet", "iid | dirichlet | shards | labels | file | natural"},
      {"partition.alpha", "0.5", "Dirichlet concentration (> 0)"},
      {"partition.shards", "200", "number of shards, each of one label (shards scheme; >= the labels present)"},
      {"partition.shards_per_client", "2", "shards per client: N, or min,max for the unbalanced variant"},
      {"partition.file", "", ".npy of integer client ids, one per training sample (file scheme)"},
      {"partition.samples_per_client", "0", "keep at most this many samples per client (0 = all)"},
      {"data.dir", "", "dataset directory"},  // help completed by helpText: the per-dataset default
      {"data.file", "", "data file for the csv and hdf5 datasets"},
      {"data.split", "0.8,0.1,0.1", "per-client train,val,test fractions (sum 1; zeros allowed: metrics needing that split are NaN)"},
      {"data.alpha", "1", "Synthetic(alpha, beta): alpha"},
      {"data.beta", "1", "Synthetic(alpha, beta): beta"},
      {"data.users", "100", "synthetic/sequence: number of users"},
      {"data.label_column", "label", "csv: label column name"},
      {"data.client_column", "", "csv: optional client column (natural partition)"},
      {"data.seq_length", "20", "sequence/leaf text: tokens per sample"},
      {"data.vocab_size", "50", "sequence: vocabulary size"},
      {"data.samples_per_user", "200", "sequence: samples per user"},
      {"data.classes", "0", "sequence: number of classes (0 = default)"},
      {"model.hidden", "200,200", "mlp hidden layer widths"},
      {"model.dropout", "0", "dropout probability after hidden layers, in [0, 1)"},
      {"model.loss", "", "loss override: cross_entropy | hinge | focal (default: the preset's)"},
      {"model.focal_gamma", "2", "focal loss gamma (>= 0)"},
      {"model.embed_dim", "32", "lstm: embedding dimension"},
      {"model.lstm_hidden", "64", "lstm: hidden units per layer"},
      {"model.lstm_layers", "2", "lstm: stacked layers"},
      {"fl.clients_per_round", "0", "clients sampled per round (0 = all)"},
      {"fl.dropout", "0", "probability that a selected client drops out of a round, in [0, 1)"},
      {"fl.skip_diverged", "false", "drop a client update whose loss or parameters are NaN/Inf instead of failing"},
      {"fl.placement", "samples",
       "clients -> ranks, contiguous ranges balancing: samples (training samples per rank) | clients (client "
       "count); results do not depend on it"},
      {"eval.every", "1", "evaluate every N rounds (the last round always)"},
      {"eval.batch", "256", "evaluation batch size"},
      {"output.client_models", "false", "also write every client's final model to /model/clients"},
      {"checkpoint.every", "0", "write <output>.ckpt every N rounds (0: only on SIGTERM/SIGUSR1)"},
  };
  return opts;
}

// An option's help with its default spelled out where Boost shows none (an empty default string).
std::string helpText(const std::string& key, const std::string& def, const std::string& help) {
  if (key == "data.dir")
    return help + " (default: the dataset's standard location: " + defaultDataDir("fashion_mnist") +
           " for fashion_mnist; none for the other datasets, which need it)";
  if (!def.empty() || help.find("(default:") != std::string::npos) return help;
  return help + " (default: none)";
}

std::string sectionOf(const std::string& key) {
  const auto dot = key.find('.');
  return dot == std::string::npos ? "" : key.substr(0, dot);
}

long long intIn(const std::string& key, const std::string& v, long long lo, long long hi) {
  const long long x = parseInt(v, key);
  if (x < lo || x > hi) throw ConfigError(fmt(key, " = ", v, ": expected an integer in [", lo, ", ", hi, "]"));
  return x;
}

double numIn(const std::string& key, const std::string& v, double lo, double hi, bool openLo = false, bool openHi = false) {
  const double x = parseDouble(v, key);
  const bool ok = std::isfinite(x) && (openLo ? x > lo : x >= lo) && (openHi ? x < hi : x <= hi);
  if (!ok)
    throw ConfigError(fmt(key, " = ", v, ": expected a number in ", openLo ? "(" : "[", lo, ", ", hi, openHi ? ")" : "]"));
  return x;
}

bool boolOf(const std::string& key, const std::string& v) {
  OptionValues o;
  o.set(key, v);
  return o.getBool(key);
}

void oneOf(const std::string& key, const std::string& v, const std::vector<std::string>& allowed) {
  for (const auto& a : allowed)
    if (v == a) return;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw ConfigError(fmt(key, " = ", v, ": expected one of ", list));
}

ExperimentConfig toConfig(const std::map<std::string, std::string>& v) {
  ExperimentConfig c;
  auto g = [&](const std::string& k) -> const std::string& { return v.at(k); };
  c.algorithm = trim(g("algorithm"));
  c.data.dataset = trim(g("dataset"));
  c.model.name = trim(g("model"));
  c.clients = static_cast<int>(intIn("clients", g("clients"), 1, 1000000));
  c.rounds = static_cast<int>(intIn("rounds", g("rounds"), 1, 100000000));
  c.seed = static_cast<std::uint64_t>(intIn("seed", g("seed"), 0, (1LL << 62)));
  c.output.path = trim(g("output"));
  if (c.output.path.empty()) throw ConfigError("output = '': expected a file path");
  c.train.epochs = static_cast<int>(intIn("train.epochs", g("train.epochs"), 0, 100000));
  c.train.batch = static_cast<int>(intIn("train.batch", g("train.batch"), 1, 1 << 20));
  c.train.lr = numIn("train.lr", g("train.lr"), 0.0, 1e6, true);
  c.train.momentum = numIn("train.momentum", g("train.momentum"), 0.0, 1.0, false, true);
  c.train.weightDecay = numIn("train.weight_decay", g("train.weight_decay"), 0.0, 1e6);

  c.partition.scheme = trim(g("partition.scheme"));
  oneOf("partition.scheme", c.partition.scheme, {"iid", "dirichlet", "shards", "labels", "file", "natural"});
  c.partition.alpha = numIn("partition.alpha", g("partition.alpha"), 0.0, 1e9, true);
  c.partition.shards = static_cast<int>(intIn("partition.shards", g("partition.shards"), 1, 100000000));
  {
    const auto spc = parseIntList(g("partition.shards_per_client"), "partition.shards_per_client");
    if (spc.empty() || spc.size() > 2 || spc.front() < 1 || spc.back() < spc.front())
      throw ConfigError(fmt("partition.shards_per_client = ", g("partition.shards_per_client"),
                            ": expected N or min,max with 1 <= min <= max"));
    c.partition.shardsPerClientMin = spc.front();
    c.partition.shardsPerClientMax = spc.back();
  }
  c.partition.file = trim(g("partition.file"));
  if (c.partition.scheme == "file" && c.partition.file.empty())
    throw ConfigError("partition.scheme = file needs partition.file (a .npy of client ids)");
  c.partition.samplesPerClient = intIn("partition.samples_per_client", g("partition.samples_per_client"), 0, 1LL << 40);

  c.data.dir = trim(g("data.dir"));
  c.data.file = trim(g("data.file"));
  c.data.split = parseDoubleList(g("data.split"), "data.split");
  {
    double s = 0.0;
    bool ok = c.data.split.size() == 3;
    for (double f : c.data.split) {
      ok = ok && std::isfinite(f) && f >= 0.0;
      s += f;
    }
    if (!ok || std::fabs(s - 1.0) > 1e-6 || c.data.split[0] <= 0.0)
      throw ConfigError(fmt("data.split = ", g("data.split"),
                            ": expected three non-negative fractions train,val,test summing to 1 with train > 0"));
  }
  c.data.alpha = numIn("data.alpha", g("data.alpha"), 0.0, 1e6);
  c.data.beta = numIn("data.beta", g("data.beta"), 0.0, 1e6);
  c.data.users = static_cast<int>(intIn("data.users", g("data.users"), 1, 1000000));
  c.data.labelColumn = trim(g("data.label_column"));
  c.data.clientColumn = trim(g("data.client_column"));
  c.data.seqLength = static_cast<int>(intIn("data.seq_length", g("data.seq_length"), 1, 100000));
  c.data.vocabSize = static_cast<int>(intIn("data.vocab_size", g("data.vocab_size"), 4, 10000000));
  c.data.samplesPerUser = static_cast<int>(intIn("data.samples_per_user", g("data.samples_per_user"), 1, 10000000));
  c.data.numClasses = static_cast<int>(intIn("data.classes", g("data.classes"), 0, 100000));

  c.model.hidden = parseIntList(g("model.hidden"), "model.hidden");
  for (int h : c.model.hidden)
    if (h < 1 || h > 1000000) throw ConfigError(fmt("model.hidden = ", g("model.hidden"), ": widths must be in [1, 1000000]"));
  c.model.dropout = numIn("model.dropout", g("model.dropout"), 0.0, 1.0, false, true);
  c.model.loss = trim(g("model.loss"));
  if (!c.model.loss.empty()) oneOf("model.loss", c.model.loss, {"cross_entropy", "hinge", "focal"});
  c.model.focalGamma = numIn("model.focal_gamma", g("model.focal_gamma"), 0.0, 100.0);
  c.model.embedDim = static_cast<int>(intIn("model.embed_dim", g("model.embed_dim"), 1, 100000));
  c.model.lstmHidden = static_cast<int>(intIn("model.lstm_hidden", g("model.lstm_hidden"), 1, 100000));
  c.model.lstmLayers = static_cast<int>(intIn("model.lstm_layers", g("model.lstm_layers"), 1, 16));

  c.fl.clientsPerRound = static_cast<int>(intIn("fl.clients_per_round", g("fl.clients_per_round"), 0, 1000000));
  c.fl.dropout = numIn("fl.dropout", g("fl.dropout"), 0.0, 1.0, false, true);
  c.fl.skipDiverged = boolOf("fl.skip_diverged", g("fl.skip_diverged"));
  c.fl.placement = g("fl.placement");
  oneOf("fl.placement", c.fl.placement, {"samples", "clients"});
  c.eval.every = static_cast<int>(intIn("eval.every", g("eval.every"), 1, 100000000));
  c.eval.batch = static_cast<int>(intIn("eval.batch", g("eval.batch"), 1, 1 << 20));
  c.output.clientModels = boolOf("output.client_models", g("output.client_models"));
  c.checkpoint.every = static_cast<int>(intIn("checkpoint.every", g("checkpoint.every"), 0, 100000000));

  bool known = false;
  for (const auto& e : algorithmRegistry()) known = known || c.algorithm == e.name;
  if (!known) makeAlgorithm(c);  // throws the ConfigError listing the algorithms
  bool model = false;
  for (const auto& m : modelPresetNames()) model = model || c.model.name == m;
  if (!model) {
    std::string list;
    for (const auto& m : modelPresetNames()) list += (list.empty() ? "" : ", ") + m;
    throw ConfigError(fmt("model = ", c.model.name, ": unknown model, expected one of ", list));
  }
  for (const auto& o : allAlgorithmOptions()) c.algo.set(o.key, v.at(o.key));
  // Options that name files are resolved here, in io, so that algorithms never do I/O.
  resolveAlphaFedAvgReference(c.algo);
  // Every algorithm validates its own options now, before any data is read.
  makeAlgorithm(c);
  return c;
}

std::string resolvedIni(const std::map<std::string, std::string>& v) {
  std::ostringstream os;
  os << "# fedsilo " << FEDSILO_VERSION << " resolved configuration\n";
  for (const auto& [k, val] : v)
    if (sectionOf(k).empty()) os << k << " = " << val << "\n";
  std::string current;
  for (const auto& [k, val] : v) {
    const std::string s = sectionOf(k);
    if (s.empty()) continue;
    if (s != current) {
      os << "\n[" << s << "]\n";
      current = s;
    }
    os << k.substr(s.size() + 1) << " = " << val << "\n";
  }
  return os.str();
}

}  // namespace

ParseOutcome parseArguments(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"fedsilo"};
  for (const auto& a : args) argv.push_back(a.c_str());
  return parseCommandLine(static_cast<int>(argv.size()), argv.data());
}

ParseOutcome parseCommandLine(int argc, const char* const* argv) {
  po::options_description generic("Generic options");
  generic.add_options()("help,h", "print this help and exit")("version", "print the version and exit")(
      "config,c", po::value<std::string>(), "INI configuration file")(
      "resume", "continue from <output>.ckpt if it exists")(
      "dry-run", "validate the configuration, print it fully resolved, and exit");
  po::options_description exp("Experiment options (INI: top-level keys, or key = value under [section])");
  std::vector<std::pair<std::string, std::string>> defaults;
  for (const auto& o : coreOptions()) {
    exp.add_options()(o.key, po::value<std::string>()->default_value(o.def), helpText(o.key, o.def, o.help).c_str());
    defaults.emplace_back(o.key, o.def);
  }
  po::options_description algo("Algorithm options");
  for (const auto& o : allAlgorithmOptions()) {
    algo.add_options()(o.key.c_str(), po::value<std::string>()->default_value(o.defaultValue),
                       helpText(o.key, o.defaultValue, o.help).c_str());
    defaults.emplace_back(o.key, o.defaultValue);
  }
  po::options_description all;
  all.add(generic).add(exp).add(algo);
  po::options_description fileOpts;
  fileOpts.add(exp).add(algo);

  ParseOutcome out;
  po::variables_map vm;
  try {
    po::parsed_options cl = po::command_line_parser(argc, argv)
                                .options(all)
                                .positional(po::positional_options_description())
                                .style(po::command_line_style::unix_style)
                                .run();
    // On the command line a later occurrence overrides an earlier one (scripts append overrides);
    // in the INI file a duplicated key stays an error.
    std::vector<po::option> kept;
    for (auto it = cl.options.rbegin(); it != cl.options.rend(); ++it) {
      bool seen = false;
      for (const auto& k : kept) seen = seen || k.string_key == it->string_key;
      if (!seen) kept.insert(kept.begin(), *it);
    }
    cl.options = kept;
    po::store(cl, vm);
    if (vm.count("help")) {
      std::ostringstream os;
      os << "fedsilo " << FEDSILO_VERSION << ": cross-silo federated learning on MPI\n\n"
         << "usage: mpirun -n P fedsilo --config configs/X.ini [--section.key value ...]\n\n"
         << all << "\nAlgorithms:\n";
      for (const auto& e : algorithmRegistry()) os << "  " << e.name << ": " << e.summary << "\n";
      os << "\nExit codes: 0 success, 2 bad command line or configuration, 3 bad or missing input data, 1 other errors,\n"
         << "75 interrupted by SIGTERM/SIGUSR1 after writing <output>.ckpt (run again with --resume).\n";
      out.action = ParseOutcome::Action::Help;
      out.text = os.str();
      return out;
    }
    if (vm.count("version")) {
      out.action = ParseOutcome::Action::Version;
      out.text = std::string("fedsilo ") + FEDSILO_VERSION + "\n";
      return out;
    }
    if (vm.count("config")) {
      const std::string path = vm["config"].as<std::string>();
      if (std::filesystem::is_directory(path))
        throw ConfigError(fmt("config = ", path, ": is a directory, expected an INI file"));
      std::ifstream in(path);
      if (!in) throw ConfigError(fmt("config = ", path, ": cannot open the configuration file"));
      // A zero-byte file is what a failed or interrupted write leaves: refuse it rather than run
      // every default (a file of comments only is a deliberate choice and is accepted).
      if (in.peek() == std::ifstream::traits_type::eof())
        throw ConfigError(fmt("config = ", path, ": the file is empty (0 bytes), expected an INI file"));
      po::store(po::parse_config_file(in, fileOpts, false), vm);
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw ConfigError(fmt("command line/config: ", e.what()));
  }
  std::map<std::string, std::string> values;
  for (const auto& [k, d] : defaults) values[k] = vm.count(k) ? vm[k].as<std::string>() : d;
  // Fully resolved: an empty data.dir becomes the dataset's default directory (the one the loader
  // reads), so the stored configuration and the --resume comparison name it.
  if (trim(values["data.dir"]).empty()) values["data.dir"] = defaultDataDir(trim(values["dataset"]));
  out.config = toConfig(values);
  out.config.checkpoint.resume = vm.count("resume") != 0;
  out.config.resolvedIni = resolvedIni(values);
  if (vm.count("dry-run")) {
    out.action = ParseOutcome::Action::DryRun;
    out.text = out.config.resolvedIni;
  }
  return out;
}

}  // namespace fedsilo
