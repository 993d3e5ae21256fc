#include "fl/experiment.hpp"

#include <algorithm>

#include "core/types.hpp"
#include "data/augment.hpp"
#include "data/loaders.hpp"
#include "data/normalize.hpp"
#include "data/partition.hpp"
#include "fl/async_driver.hpp"
#include "fl/fairness.hpp"
#include "io/model_reader.hpp"
#include "nn/presets.hpp"

namespace fedsilo {

namespace {

// A client of a natural partition with its own test files (LEAF, Synthetic): its test split is its
// test data, and its training slice is split into train/val only (the fractions renormalised).
ClientData naturalClientWithOwnTest(const DataBundle& data, const IndexList& slice, const ExperimentConfig& cfg,
                                    int k) {
  const std::vector<double>& split = cfg.data.split;
  const double trainAndVal = split[0] + split[1];
  std::vector<double> trainValSplit{1, 0, 0};
  if (trainAndVal > 0) trainValSplit = {split[0] / trainAndVal, split[1] / trainAndVal, 0.0};
  ClientSplit s = splitClient(slice, trainValSplit, cfg.seed, k);
  ClientData c;
  c.id = k;
  c.train = std::move(s.train);
  c.val = std::move(s.val);
  for (Index i = 0; i < data.test.size(); ++i)
    if (data.naturalClientTest[static_cast<std::size_t>(i)] == k) c.test.push_back(i);
  c.testFromTestSet = true;
  return c;
}

ClientData splitClientSlice(const IndexList& slice, const ExperimentConfig& cfg, int k) {
  ClientSplit s = splitClient(slice, cfg.data.split, cfg.seed, k);
  ClientData c;
  c.id = k;
  c.train = std::move(s.train);
  c.val = std::move(s.val);
  c.test = std::move(s.test);
  return c;
}
}  // namespace

std::vector<ClientData> makeClients(const DataBundle& data, const ExperimentConfig& cfg) {
  const std::vector<IndexList> slices = partitionData(data, cfg.clients, cfg.partition, cfg.seed);
  const bool ownTest = !data.naturalClientTest.empty() && cfg.partition.scheme == PartitionScheme::Natural;
  std::vector<ClientData> clients;
  clients.reserve(static_cast<std::size_t>(cfg.clients));
  for (int k = 0; k < cfg.clients; ++k) {
    const IndexList& slice = slices[static_cast<std::size_t>(k)];
    clients.push_back(ownTest ? naturalClientWithOwnTest(data, slice, cfg, k) : splitClientSlice(slice, cfg, k));
    if (clients.back().train.empty())
      throw ConfigError(fmt("client ", k, " has no training samples (slice of ", slice.size(),
                            " samples, data.split train fraction ", cfg.data.split[0], "): use fewer clients"));
  }
  return clients;
}

Experiment::Experiment(const ExperimentConfig& cfg, const Communicator& comm, const RunHooks& hooks,
                       Announcer& announcer)
    : cfg_(cfg), comm_(comm), hooks_(hooks), announcer_(announcer), placement_(cfg.clients, comm.size()) {
  // Every rank reads the data itself (no broadcast of the dataset); failures are agreed on.
  coordinated(comm_, [&] { data_ = loadDataset(hooks_.dataToLoad(cfg_.data), cfg_.seed); });
  coordinated(comm_, [&] {
    clients_ = makeClients(data_, cfg_);
    normalizeInputs(data_, cfg_.data, trainLists());
  });
  placeClients();
  coordinated(comm_, [&] { buildModelAndAlgorithm(); });
  // (The driver calibrates a sample-level privacy target from the clients' sizes: it can fail.)
  coordinated(comm_, [&] {
    const RoundParts parts{cfg_, comm_, placement_, data_, clients_, *model_, *trainer_, *alg_, *ctx_, global_, hooks_};
    driver_ = std::make_unique<RoundDriver>(parts);
    if (AsyncAlgorithm* async = alg_->asynchronous()) async_ = std::make_unique<AsyncDriver>(parts, *async, *driver_);
  });
}

Experiment::~Experiment() = default;

std::vector<const IndexList*> Experiment::trainLists() const {
  std::vector<const IndexList*> lists;
  for (const ClientData& c : clients_) lists.push_back(&c.train);
  return lists;
}

// The clients of each rank (the same on every rank: every rank holds every client's lists), balancing
// the training samples (fl.placement = samples) or the client count in contiguous ranges (clients).
void Experiment::placeClients() {
  if (cfg_.fl.placement != PlacementBalance::Samples) return;  // the constructor's count placement
  std::vector<std::int64_t> samples(clients_.size());
  for (std::size_t k = 0; k < clients_.size(); ++k) samples[k] = static_cast<std::int64_t>(clients_[k].train.size());
  placement_ = Placement(samples, comm_.size());
}

namespace {

// The largest training batch any client can form: a batch larger than a client's training set is the
// whole set, so min(train.batch, the largest client's training set) sizes the training buffers.
int largestTrainingBatch(const std::vector<ClientData>& clients, int batch) {
  std::size_t largest = 1;
  for (const ClientData& c : clients) largest = std::max(largest, c.train.size());
  return static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(batch), largest));
}

}  // namespace

void Experiment::buildModelAndAlgorithm() {
  InputSpec in{data_.train.shape, data_.train.numClasses, data_.vocabSize};
  model_ = buildModel<float>(cfg_.model, in);
  // Workspaces for the largest training batch any client takes; evaluation batches run in chunks
  // (Model::evaluate).
  const int trainBatch = largestTrainingBatch(clients_, cfg_.train.batch);
  model_->reserve(Model::reserveBatch(trainBatch, cfg_.eval.batch));
  trainer_ = std::make_unique<LocalTrainer>(data_.train, std::max(trainBatch, cfg_.eval.batch));
  if (cfg_.data.augment != AugmentKind::None) {
    std::vector<float> fill;
    for (int c = 0; c < data_.train.shape.c; ++c) fill.push_back(data_.train.zeroValue(c));
    trainer_->setAugmenter(std::make_unique<Augmenter>(AugmentSettings::from(cfg_.data), data_.train.shape,
                                                       std::move(fill), data_.name),
                           cfg_.seed);
  }
  // The shared initial model: one stream keyed by the experiment seed only, or model.init's file.
  Rng init(cfg_.seed, -1, -1, Purpose::Init);
  model_->initialize(init);
  if (!cfg_.model.initFile.empty()) loadInitialModel();
  global_.assign(model_->params(), model_->params() + model_->numParams());
  ctx_.reset(new FlContext{cfg_, data_, clients_, placement_, comm_.rank(), model_->blocks(), model_->numParams(), in,
                           &announcer_});
  alg_ = makeAlgorithm(cfg_);
  alg_->setup(*ctx_, global_);
}

namespace {

LayerTable layerTableOf(const std::vector<LayerBlock>& blocks) {
  LayerTable t;
  for (const LayerBlock& b : blocks) {
    t.names.push_back(b.name);
    t.sizes.push_back(b.size);
  }
  return t;
}

}  // namespace

LayerTable Experiment::layerTable() const { return layerTableOf(ctx_->blocks); }

void Experiment::loadInitialModel() {
  const StoredModel stored = readStoredModel(cfg_.model.initFile);
  checkStoredModel(stored, cfg_.model.initFile, layerTableOf(model_->blocks()));
  std::copy(stored.params.begin(), stored.params.end(), model_->params());
}

void Experiment::writeClientTable(RecordSink& sink) {
  const int r = comm_.rank();
  const int C = data_.train.numClasses;
  std::vector<std::int64_t> rank, numTrain, numVal, numTest, labelCounts;
  for (int k : placement_.clients(r)) {
    const ClientData& c = clients_[k];
    rank.push_back(r);
    numTrain.push_back(static_cast<std::int64_t>(c.train.size()));
    numVal.push_back(static_cast<std::int64_t>(c.val.size()));
    numTest.push_back(static_cast<std::int64_t>(c.test.size()));
    for (Index v : data_.train.labelCounts(c.train)) labelCounts.push_back(v);
  }
  sink.writeClientIntRows("/clients/rank", rank, 1);
  sink.writeClientIntRows("/clients/num_train", numTrain, 1);
  sink.writeClientIntRows("/clients/num_val", numVal, 1);
  sink.writeClientIntRows("/clients/num_test", numTest, 1);
  sink.writeClientIntRows("/clients/label_counts", labelCounts, static_cast<std::uint64_t>(C));
}

void Experiment::run(RecordSink& sink, const std::function<bool(const RoundSummary&)>& onRound) {
  if (nextRound() == 0) writeClientTable(sink);
  if (async_ && !async_->run(sink, onRound)) return;
  for (int t = driver_->nextRound(); !async_ && t < cfg_.rounds; ++t) {
    const RoundSummary summary = driver_->runRound(t, sink);
    if (onRound && !onRound(summary)) return;
  }
  // End-of-training client hooks (FedBABU fine-tuning, ...), then the clients are evaluated again.
  driver_->finishTraining();
}

int Experiment::nextRound() const { return async_ ? async_->nextVersion() : driver_->nextRound(); }

void Experiment::checkpoint(StateArchive& ar) {
  driver_->checkpoint(ar);
  if (async_) async_->checkpoint(ar);
  alg_->checkpoint(ar);
}

void Experiment::writeFinal(RecordSink& sink) {
  writeSummary(sink);
  writeModel(sink);
  writeSensitivity(sink);
  if (!data_.vocabulary.empty()) sink.writeStrings("/data/vocabulary", data_.vocabulary);
  alg_->record(*ctx_, sink);
  driver_->recordPrivacy(sink);
  driver_->recordRobust(sink);
  driver_->recordCompression(sink);
  driver_->recordSystem(sink);
}

// The selected client figures (eval.select) and their summary (replicated: computed on root,
// broadcast; the client mean weighted per eval.client_weighting), and the final global model's figures.
void Experiment::writeSummary(RecordSink& sink) {
  const ClientSelection& selection = driver_->selection();
  const int localClients = placement_.count(comm_.rank());
  ClientFigures selected(localClients);
  std::vector<std::int64_t> selectedRound;
  for (int i = 0; i < localClients; ++i) {
    selected.set(i, selection.selected(i));
    selectedRound.push_back(selection.selectedRound(i));
  }
  const std::vector<double> allAccuracy = placement_.toClientOrder(comm_.gatherv(selected.accuracy, 0), 1);
  const std::vector<double> allF1 = placement_.toClientOrder(comm_.gatherv(selected.f1, 0), 1);
  std::vector<double> figures(9, kNaN);
  if (comm_.isRoot()) {
    const AccuracySummary s = summarize(allAccuracy);
    std::vector<double> trainSamples(clients_.size());
    for (std::size_t k = 0; k < clients_.size(); ++k) trainSamples[k] = static_cast<double>(clients_[k].train.size());
    const bool bySamples = cfg_.eval.clientWeighting == ClientWeighting::Samples;
    const double sampleWeighted = efficiency(allAccuracy, trainSamples);
    figures = {bySamples ? sampleWeighted : s.mean, s.median, s.worst10, s.best10, s.variance, s.jain, sampleWeighted,
               median(driver_->roundSeconds()), bySamples ? efficiency(allF1, trainSamples) : mean(allF1)};
  }
  comm_.bcast(figures.data(), figures.size(), 0);
  sink.writeClientRows("/summary/client_accuracy", selected.accuracy, 1);
  sink.writeClientRows("/summary/client_f1", selected.f1, 1);
  sink.writeClientRows("/summary/client_loss", selected.loss, 1);
  sink.writeClientRows("/summary/client_val_accuracy", selected.valAccuracy, 1);
  sink.writeClientRows("/summary/client_val_loss", selected.valLoss, 1);
  sink.writeClientIntRows("/summary/selected_round", selectedRound, 1);
  const char* names[] = {"mean", "median",     "worst10", "best10", "variance", "jain", "efficiency",
                         "seconds_per_round", "mean_f1"};
  for (std::size_t i = 0; i < figures.size(); ++i) sink.writeScalar(std::string("/summary/") + names[i], figures[i]);
  const GlobalFigures global = driver_->finalGlobal();
  sink.writeScalar("/summary/global_accuracy", global.accuracy);
  sink.writeScalar("/summary/global_loss", global.loss);
}

// /model: the global parameters, the layer table, and (output.client_models) every client's own.
void Experiment::writeModel(RecordSink& sink) {
  const std::vector<LayerBlock>& blocks = ctx_->blocks;
  sink.writeFloatArray("/model/global", global_, {static_cast<std::uint64_t>(global_.size())});
  const LayerTable table = layerTable();
  std::vector<std::int64_t> offsets;
  for (const auto& b : blocks) offsets.push_back(b.offset);
  sink.writeStrings("/model/layers/name", table.names);
  sink.writeIntArray("/model/layers/offset", offsets, {blocks.size()});
  sink.writeIntArray("/model/layers/size", table.sizes, {blocks.size()});
  sink.writeNumberAttribute("/model", "train_flops_per_sample", model_->trainFlopsPerSample());
  if (!cfg_.output.clientModels) return;
  const int r = comm_.rank();
  std::vector<float> rows;
  rows.reserve(static_cast<std::size_t>(placement_.count(r)) * global_.size());
  std::vector<float> params(global_.size());
  const ClientSelection& selection = driver_->selection();
  for (int k : placement_.clients(r)) {
    if (const std::vector<float>* kept = selection.params(placement_.slot(k))) {  // eval.select = best_val: the selected model
      rows.insert(rows.end(), kept->begin(), kept->end());
      continue;
    }
    alg_->loadEvalParams(*ctx_, k, global_, params.data());
    rows.insert(rows.end(), params.begin(), params.end());
  }
  sink.writeClientFloatRows("/model/clients", rows, global_.size());
}

void Experiment::writeSensitivity(RecordSink& sink) {
  std::vector<std::string> layerNames;
  for (const auto& b : ctx_->blocks) layerNames.push_back(b.name);
  const std::size_t L = layerNames.size();
  sink.writeStrings("/sensitivity/layers", layerNames);
  sink.writeClientMatrix("/sensitivity/round0", driver_->sensitivityRound0(), L);  // [K, L] also for one layer
  sink.writeClientMatrix("/sensitivity/final", driver_->sensitivityFinal(), L);
}

}  // namespace fedsilo
