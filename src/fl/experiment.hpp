// One federated experiment on this rank: data, clients, model, algorithm, and the round loop (the
// rounds themselves are the RoundDriver's, fl/round_driver.hpp).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/placement.hpp"
#include "core/config.hpp"
#include "core/record_sink.hpp"
#include "data/dataset.hpp"
#include "fl/algorithm.hpp"
#include "fl/announcer.hpp"
#include "fl/client.hpp"
#include "fl/local_trainer.hpp"
#include "fl/round_driver.hpp"

namespace fedsilo {

class AsyncDriver;  // fl/async_driver.hpp
struct LayerTable;  // io/model_reader.hpp: io is not among the installed headers, so not included here

// Every client's train/val/test index lists (the same on every rank): the partition of the training
// pool cut by data.split, or, for natural partitions with their own test files, the client's test
// samples. ConfigError for a client without training samples.
std::vector<ClientData> makeClients(const DataBundle& data, const ExperimentConfig& cfg);

class Experiment {
 public:
  // Loads the dataset, partitions it, builds the model and the algorithm. Collective; failures on any
  // rank are agreed on (every rank throws). `hooks` (kept by reference) lets tests make one rank
  // misbehave; production runs use the default. The algorithms' decisions and the rounds' progress go
  // to `announcer` (kept by reference).
  Experiment(const ExperimentConfig& cfg, const Communicator& comm, const RunHooks& hooks = noRunHooks(),
             Announcer& announcer = silentAnnouncer());
  ~Experiment();

  // Runs rounds [nextRound(), cfg.rounds). `onRound` (may be empty) is called on every rank after each
  // round; returning false stops the run early (checkpoint/pre-emption).
  void run(RecordSink& sink, const std::function<bool(const RoundSummary&)>& onRound = {});
  // Writes /clients/* (collective). Called by run() before the first round.
  void writeClientTable(RecordSink& sink);
  // Writes /summary, /model, /sensitivity and the algorithm's own records (collective).
  void writeFinal(RecordSink& sink);
  // Saves or restores (collective, symmetric) the state between rounds: the driver's
  // (RoundDriver::checkpoint), then the algorithm's own.
  void checkpoint(StateArchive& ar);

  const std::vector<float>& global() const { return global_; }
  const FlContext& context() const { return *ctx_; }
  const std::vector<double>& lastClientAccuracy() const { return driver_->lastClientFigures().accuracy; }
  const Placement& placement() const { return placement_; }
  // The global model's layer blocks (names and sizes), as /model/layers and checkpoints record them.
  LayerTable layerTable() const;
  Algorithm& algorithm() { return *alg_; }
  int nextRound() const;
  const RoundDriver& driver() const { return *driver_; }
  const DataBundle& data() const { return data_; }
  // Every client's train/val/test index lists (the same on every rank).
  const std::vector<ClientData>& clients() const { return clients_; }
  // One line on the privacy settings for the banner (empty when privacy is off).
  std::string privacyDescription() const { return driver_->privacyDescription(); }

 private:
  void placeClients();
  void buildModelAndAlgorithm();
  // model.init: the file's parameters into the working model (names and sizes checked).
  void loadInitialModel();
  // Every client's training split (what data.normalize's statistics are computed over).
  std::vector<const IndexList*> trainLists() const;
  void writeSummary(RecordSink& sink);
  void writeModel(RecordSink& sink);
  void writeSensitivity(RecordSink& sink);

  const ExperimentConfig& cfg_;
  const Communicator& comm_;
  const RunHooks& hooks_;
  Announcer& announcer_;
  Placement placement_;
  DataBundle data_;
  std::vector<ClientData> clients_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<LocalTrainer> trainer_;
  std::unique_ptr<Algorithm> alg_;
  std::unique_ptr<FlContext> ctx_;
  std::vector<float> global_;
  std::unique_ptr<RoundDriver> driver_;
  // An asynchronous algorithm's versions (null for the synchronous ones); evaluation and the end of
  // training stay the round driver's.
  std::unique_ptr<AsyncDriver> async_;
};

}  // namespace fedsilo
