// The typed experiment configuration. io/config_parser fills and validates it from the INI file and
// the command line (Boost.Program_options); everything below io reads only these typed structs.
// Algorithm-specific options are declared next to each algorithm (OptionSpec) and parsed once, at
// start-up, into that algorithm's own typed struct through OptionValues.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fedsilo {

struct TrainConfig {
  int epochs = 1;
  int batch = 32;
  double lr = 0.05;
  double momentum = 0.0;
  double weightDecay = 0.0;
};

struct PartitionConfig {
  std::string scheme = "dirichlet";  // iid | dirichlet | shards | labels | file | natural
  double alpha = 0.5;                // dirichlet concentration
  int shards = 200;                  // number of label-sorted shards
  int shardsPerClientMin = 2;        // shards_per_client = N or min,max
  int shardsPerClientMax = 2;
  std::string file;                  // .npy of client ids, one per training sample
  long long samplesPerClient = 0;      // 0 = all; else truncate each client's slice to this many samples
};

struct DataConfig {
  std::string dataset = "fashion_mnist";
  std::string dir;                   // default per dataset (fashion_mnist: /usr/share/datasets/fashion-mnist)
  std::string file;                  // csv / hdf5 datasets
  std::vector<double> split{0.8, 0.1, 0.1};  // per-client train/val/test fractions
  // synthetic(alpha, beta)
  double alpha = 1.0, beta = 1.0;
  int users = 100;
  // csv
  std::string labelColumn = "label";
  std::string clientColumn;
  // sequence (built-in text-like task)
  int seqLength = 20;
  int vocabSize = 50;
  int samplesPerUser = 200;
  int numClasses = 0;                // sequence/synthetic: 0 = default
  // Upper bound on the classes of a dataset read from files: every label must lie in [0, maxClasses),
  // checked while the files are read, so that one stray label (say 2147483647) cannot size the model.
  int maxClasses = 100000;
};

struct ModelConfig {
  std::string name = "mlp";          // mlp | logreg | svm | cnn_mcmahan | cnn_playerfl | lstm
  std::vector<int> hidden{200, 200}; // mlp hidden widths
  double dropout = 0.0;
  std::string loss;                  // "" = the preset's default (cross_entropy; svm: hinge)
  double focalGamma = 2.0;
  int embedDim = 32;
  int lstmHidden = 64;
  int lstmLayers = 2;
};

struct FlConfig {
  int clientsPerRound = 0;           // 0 = all clients every round
  double dropout = 0.0;              // probability that a selected client drops out of a round
  bool skipDiverged = false;         // drop a NaN/Inf client update instead of failing
  std::string placement = "samples"; // clients -> ranks: samples (balance training samples) | clients (balance counts)
};

struct EvalConfig {
  int every = 1;                     // evaluate every N rounds (the last round always)
  int batch = 1000;
};

struct OutputConfig {
  std::string path = "results.h5";
  bool clientModels = false;         // also write /model/clients[K,P]
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
  bool getBool(const std::string& key) const;
  std::vector<int> getIntList(const std::string& key, int min, int max) const;  // "" -> empty
  const std::map<std::string, std::string>& all() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

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
  OptionValues algo;          // every declared algorithm option, defaults filled in
  std::string resolvedIni;    // the fully resolved configuration as INI text
};

}  // namespace fedsilo
