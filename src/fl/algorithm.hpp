// How an algorithm plugs into the round driver.
//
// Algorithms never call MPI. Per round the driver:
//   1. asks selectClients() (identical on every rank),
//   2. on every rank, for each selected local client: loads the global parameters into the working
//      model and calls clientUpdate(), which trains (through the shared LocalTrainer) and fills a
//      ClientUpdate: per-block weights for the vector to average, exact scalar sums, and a payload,
//   3. reduces sum_k w_kb * v_k (per reduced block), sum_k w_kb and the sums exactly (order-independent,
//      so results are identical at any rank count), gathers the payloads to rank 0 in client order,
//   4. calls serverUpdate() on rank 0, then broadcasts the global parameters and serverState(),
//   5. evaluates every client with evalParams() and the global model on the test set.
// Per-client state lives inside the algorithm, keyed by client id, for the clients of this rank only.
// Parameter vectors a client keeps across rounds (Ditto's personal model, PLayer-FL's local layers)
// belong in a PersonalStore returned by personalStore(): the defaults of checkpoint() and evalParams()
// then save it and evaluate each client with its entry, and the driver checks it for NaN/Inf.
// The algorithms themselves are in fl/algorithms/, one file each; fl/registry.cpp lists them, and a
// program of its own adds more with registerAlgorithm (below).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/placement.hpp"
#include "core/config.hpp"
#include "core/exact_sum.hpp"
#include "core/record_sink.hpp"
#include "core/state_archive.hpp"
#include "data/dataset.hpp"
#include "fl/announcer.hpp"
#include "fl/client.hpp"
#include "fl/local_trainer.hpp"
#include "fl/personal_store.hpp"
#include "fl/server_optimizer.hpp"
#include "nn/model.hpp"
#include "nn/presets.hpp"
#include "optim/optimizer_state_store.hpp"

namespace fedsilo {

class AsyncAlgorithm;  // fl/async_algorithm.hpp

// Read-only facts about the experiment, identical on every rank.
struct FlContext {
  const ExperimentConfig& cfg;
  const DataBundle& data;
  const std::vector<ClientData>& clients;  // all K clients
  const Placement& placement;
  int rank = 0;
  std::vector<LayerBlock> blocks;
  Index numParams = 0;
  InputSpec input;
  Announcer* announcer = nullptr;  // where decisions and progress go (nullptr: nowhere)
  bool isLocal(int client) const { return placement.owner(client) == rank; }
  Announcer& announce() const { return announcer ? *announcer : silentAnnouncer(); }
  int numBlocks() const { return static_cast<int>(blocks.size()); }
  // The dataset a client's test indices point into (its own test files for natural partitions).
  const Dataset& testSet(const ClientData& c) const { return c.testFromTestSet ? data.test : data.train; }
};

// What one client sends.
struct ClientUpdate {
  std::vector<double> blockWeight;  // size L; weight of each block of `vector` (0: not sent)
  const float* vector = nullptr;    // the vector averaged (default: the model's parameters after clientUpdate)
  std::vector<double> sums;         // sumsSize() values, summed exactly over clients
  std::vector<double> payload;      // payloadSize() values, gathered to rank 0
  double trainLoss = 0.0;
};

// Everything clientUpdate may use. `model` holds the global parameters on entry.
struct ClientContext {
  const FlContext& fl;
  const ClientData& client;
  int round;
  Model& model;
  LocalTrainer& trainer;
  const std::vector<float>& global;
  // The training settings of this round on this rank: train.* as configured with the round's lr
  // (train.lr_schedule; the round driver's test hooks may change them on one rank, app/fault_injection).
  TrainConfig train = fl.cfg.train;
  // > 0: stop local training after this many optimizer steps (TrainOptions::maxSteps; FedCompass's
  // local steps, with train.epochs set to cover them).
  int maxSteps = 0;
  // The clients' persistent optimizer states (train.optimizer_state = keep), else nullptr.
  OptimizerStateStore* optimizerStates = nullptr;
  // The stream for this client's local-epoch shuffles this round.
  Rng shuffleRng() const { return Rng(fl.cfg.seed, client.id, round, Purpose::Shuffle); }
  // The round's training options for the client's model of `role`: with optimizer_state = keep they
  // carry that model's persistent optimizer state, else every training run starts fresh moments.
  TrainOptions trainOptions(ModelRole role = ModelRole::Shared) const {
    TrainOptions o = TrainOptions::from(train);
    o.maxSteps = maxSteps;
    if (optimizerStates) o.state = &optimizerStates->get(client.id, role);
    return o;
  }
  // Accuracy of `m` on this client's test split.
  double testAccuracy(Model& m, LocalTrainer& t) const {
    return t.evaluate(m, fl.testSet(client), client.test, fl.cfg.eval.batch).accuracy();
  }
};

// What rankUpdate may use: the only place where an algorithm issues collectives itself.
struct RankContext {
  const FlContext& fl;
  int round = 0;
  int rank = 0;
  int ranks = 1;
  std::function<void(ExactSum&)> allreduceExact;  // exact sum over all ranks, result on every rank
};

// What the server step sees (rank 0 only).
struct ServerInput {
  int round = 0;
  std::vector<int> participants;       // clients that sent an update, ascending
  const ExactSum* acc = nullptr;       // packed sum_k w_kb v_k over reduced blocks
  std::vector<Index> accOffset;        // per block: offset of its values in acc (-1: not reduced)
  std::vector<double> blockWeightSum;  // per block: sum_k w_kb
  std::vector<double> sums;            // sum over clients of ClientUpdate::sums
  std::vector<int> payloadClients;     // client id of each payload row
  std::vector<double> payloads;        // rows of payloadSize() values, ascending client id
  // Per-block sensitivity of every participant after local training (rows follow payloadClients order
  // of sensitivityClients), present in round 0 and the last round, else empty.
  std::vector<int> sensitivityClients;
  std::vector<double> sensitivity;  // rows of L values
  // fl.server_optimizer when it is not none (else nullptr): the aggregation helpers
  // (fl/aggregation.hpp) step it instead of setting the aggregate.
  ServerOptimizer* serverOptimizer = nullptr;
  // Client-level DP (fl/client_privacy.hpp): acc holds the noised mean of each reduced block, whose
  // blockWeightSum is 1, and sums are not released (zeros). Server steps other than a weighted mean
  // (q-FFL, FedFa) read this flag.
  bool privateMean = false;
};

class Algorithm {
 public:
  virtual ~Algorithm() = default;
  virtual std::string name() const = 0;
  // Called once on every rank after the initial global model exists.
  virtual void setup(const FlContext& ctx, std::vector<float>& global) {
    (void)ctx;
    (void)global;
  }
  virtual bool hasGlobalModel() const { return true; }
  // Clients taking part in `round` (ascending, identical on every rank). Default: fl.clients_per_round
  // drawn uniformly without replacement (all clients when 0 or >= K).
  virtual std::vector<int> selectClients(const FlContext& ctx, int round) const;
  // Blocks reduced this round (identical on every rank). Default: all.
  virtual std::vector<char> reducedBlocks(const FlContext& ctx, int round) const;
  virtual int sumsSize() const { return 0; }
  virtual int payloadSize() const { return 0; }
  // Whether layer sensitivity includes biases (PLayer-FL's option); default weights only.
  virtual bool sensitivityIncludesBias() const { return false; }

  // Work all ranks do together once per round, before the clients train: the data-parallel `global`
  // baseline. Called on every rank (in one coordinated region) only when usesRankUpdate(). Errors
  // inside must arise on every rank alike (e.g. from a reduced value): the other ranks may be
  // waiting in a collective.
  virtual bool usesRankUpdate() const { return false; }
  virtual void rankUpdate(RankContext& c) { (void)c; }

  virtual void clientUpdate(ClientContext& c, ClientUpdate& out) = 0;
  virtual void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) = 0;
  // Whether the server step sets (part of) the global model to an aggregate of the clients' models
  // through the aggregation helpers, so that fl.server_optimizer can apply to it. The configuration
  // parser refuses a server optimizer for an algorithm that says no.
  virtual bool acceptsServerOptimizer() const { return false; }
  // Whether the server step sets the reduced blocks to the weighted mean of the clients' vectors, each
  // a model whose difference from the global one is the client's update, every reduced block sent with
  // the client's one weight: robust aggregators (fl.aggregator) and model-poisoning attacks then replace
  // that mean (fl/robust_round.hpp). The configuration parser refuses them for an algorithm that says no.
  virtual bool acceptsRobustAggregation() const { return false; }
  // Whether a selected client may send nothing in a round (fl.deadline_seconds drops the silos that
  // miss the deadline): the configuration parser refuses a deadline for an algorithm that says no
  // (the one-shot algorithms, which need every client's one upload).
  virtual bool acceptsDroppedSilos() const { return true; }
  // The asynchronous algorithms (fedasync, fedbuff): run by the asynchronous driver on the simulated
  // clock instead of in rounds (fl/async_driver.hpp); nullptr for every synchronous algorithm.
  virtual AsyncAlgorithm* asynchronous() { return nullptr; }
  // Server state replicated on every rank after each round (broadcast from rank 0).
  virtual std::vector<double> serverState() const { return {}; }
  virtual void setServerState(const std::vector<double>& state) { (void)state; }

  // Parameters client `client` would use (its personal model for personalised algorithms): writes
  // them into `out` and returns true, or returns false and writes nothing when they are the global
  // parameters. The false case lets the driver load the global model once for all such clients
  // instead of once per client (at K = 10,000 that copy dominated a round). Default: the client's
  // personalStore() entry when it has one, else false (global).
  virtual bool evalParams(const FlContext& ctx, int client, const std::vector<float>& global, float* out) const;
  // evalParams, with the global parameters copied into `out` when it returns false.
  void loadEvalParams(const FlContext& ctx, int client, const std::vector<float>& global, float* out) const;
  // The per-client parameter vectors that persist across rounds (personal models, local layers), or
  // nullptr. After each clientUpdate the driver checks the client's entry for NaN/Inf (as it checks
  // the update it reduces), and when it drops a diverged update (fl.skip_diverged) it puts the entry
  // back as it was before the round, so a dropped round leaves no trace in the client's state.
  // Per-client state kept elsewhere must be undone (and checkpointed) by the algorithm itself.
  virtual PersonalStore* personalStore() { return nullptr; }
  // The same store, read-only (what the default evalParams reads).
  const PersonalStore* personalStore() const { return const_cast<Algorithm*>(this)->personalStore(); }
  // After the last round, for every local client (FedBABU's head fine-tuning, ...).
  virtual void finishClient(ClientContext& c) { (void)c; }
  // Whether finishClient changes the models the clients use: the end-of-training evaluation is then
  // a model of its own for eval.point = after_local (fl/eval_selection.hpp).
  virtual bool changesModelsAtEnd() const { return false; }
  // The evaluation of client c on its test split when the model it would use is not one parameter
  // vector of the working model (an ensemble's vote, GEMS' wider neuron-wise model), or nullopt (the
  // default): the driver then evaluates the vector evalParams gives. c.model may be overwritten.
  virtual std::optional<EvalStats> evaluateClient(ClientContext& c) {
    (void)c;
    return std::nullopt;
  }
  // Saves or restores everything that persists across rounds (checkpoint/restart). Default: the
  // replicated serverState() as "server_state" and the personalStore() (when there is one) as
  // "personal". Algorithms with further state override, call Algorithm::checkpoint(ar) and add theirs.
  virtual void checkpoint(StateArchive& ar);
  // The algorithm's own records (collective: identical calls on every rank).
  virtual void record(const FlContext& ctx, RecordSink& sink) const {
    (void)ctx;
    (void)sink;
  }
};

using AlgorithmFactory = std::unique_ptr<Algorithm> (*)(const ExperimentConfig&);

struct AlgorithmEntry {
  const char* name;
  AlgorithmFactory make;
  const char* summary;
  std::vector<OptionSpec> (*options)();  // declared options (may be nullptr)
  // One-shot algorithms: the number of rounds they run for this configuration (their factory refuses
  // any other); nullptr for iterative algorithms, which run any number of rounds.
  int (*oneShotRounds)(const ExperimentConfig&) = nullptr;
};

// The registry: the built-in table (fl/registry.cpp), then the entries added with registerAlgorithm in
// the order they were added.
const std::vector<AlgorithmEntry>& algorithmRegistry();
// Adds an algorithm of the program's own (docs/extending.md): `algorithm = <entry.name>` then runs it, its
// options are parsed, validated and listed in --help, and it is checkpointed as a built-in one is. Call it
// from main, identically on every rank, before app/run_main's runMain parses the command line; `name`,
// `summary` and the option texts must outlive the program (string literals). Throws std::invalid_argument,
// naming the problem, for an entry without a name, factory or summary, a name that is not lower-case
// letters, digits and '_' starting with a letter, a name already registered, or an option key another
// algorithm already declares.
void registerAlgorithm(const AlgorithmEntry& entry);
std::unique_ptr<Algorithm> makeAlgorithm(const ExperimentConfig& cfg);  // ConfigError on unknown names
std::vector<OptionSpec> allAlgorithmOptions();
// The registered algorithms, made for `cfg` with their own names, for which `test` is true, as "a, b, c"
// (an algorithm whose options do not fit `cfg` is left out): for error messages.
std::string algorithmNamesWhere(ExperimentConfig cfg, const std::function<bool(Algorithm&)>& test);
// The registry entry of `name`, or nullptr.
const AlgorithmEntry* findAlgorithm(const std::string& name);

}  // namespace fedsilo
