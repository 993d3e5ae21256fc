#include "fl/async_driver.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/timer.hpp"
#include "fl/payload_bytes.hpp"
#include "optim/lr_schedule.hpp"

namespace fedsilo {

AsyncDriver::AsyncDriver(const RoundParts& parts, AsyncAlgorithm& alg, RoundDriver& rounds)
    : p_(parts),
      alg_(alg),
      rounds_(rounds),
      system_(parts.cfg.system, parts.cfg.seed, parts.cfg.clients),
      flopsPerSample_(parts.model.trainFlopsPerSample()),
      sums_(static_cast<std::size_t>(parts.model.numParams())) {
  // Every job downloads and uploads the whole model (fl/payload_bytes.hpp).
  RoundPayload payload;
  payload.blocks = &p_.ctx.blocks;
  payload.reduced.assign(p_.ctx.blocks.size(), 1);
  downloadBytes_ = downloadBytes(payload);
  uploadBytes_ = uploadBytes(payload, std::vector<double>(p_.ctx.blocks.size(), 1.0));
  AsyncPolicy policy;
  policy.clients = p_.cfg.clients;
  policy.concurrency = p_.cfg.fl.maxConcurrency;
  policy.versions = p_.cfg.rounds;
  schedule_ = alg.schedule(policy, [this](int k, int index, int steps) { return jobSeconds(k, index, steps); });
  evaluated_ = evaluatedVersions(schedule_, p_.cfg.eval.every, p_.cfg.eval.everySeconds);
  trained_.assign(schedule_.jobs.size(), 0);
  if (p_.cfg.fl.serverOptimizer.kind != ServerOptimizerKind::None)
    serverOptimizer_ = std::make_unique<ServerOptimizer>(p_.cfg.fl.serverOptimizer, p_.model.numParams());
}

AsyncDriver::~AsyncDriver() = default;

double AsyncDriver::jobSeconds(int client, int index, int localSteps) const {
  if (!system_.enabled()) return localSteps > 0 ? static_cast<double>(localSteps) : 1.0;
  const Index n = p_.clients[client].numTrain();
  const double samples = localSteps > 0 ? static_cast<double>(samplesOfSteps(n, p_.cfg.train.batch, localSteps))
                                        : static_cast<double>(p_.cfg.train.epochs) * static_cast<double>(n);
  return system_.downloadSeconds(client, downloadBytes_) +
         system_.computeSeconds(client, index, flopsPerSample_, samples) + system_.uploadSeconds(client, uploadBytes_);
}

bool AsyncDriver::run(RecordSink& sink, const std::function<bool(const RoundSummary&)>& onVersion) {
  while (nextVersion_ < p_.cfg.rounds) {
    trainReadyJobs();
    while (nextVersion_ < p_.cfg.rounds && versionReady(nextVersion_ + 1)) {
      const RoundSummary summary = stepVersion(sink);
      if (onVersion && !onVersion(summary)) return false;
    }
  }
  return true;
}

const std::vector<float>& AsyncDriver::startModel(int version) const {
  if (version == nextVersion_) return p_.global;
  const auto it = startModels_.find(version);
  FEDSILO_ASSERT(it != startModels_.end(), "asynchronous driver: no model of version ", version);
  return it->second;
}

// Every job a later version needs whose start version exists, each on its silo's rank.
void AsyncDriver::trainReadyJobs() {
  std::vector<int> ready;
  PhaseSize mine, all;
  for (std::size_t j = 0; j < schedule_.jobs.size(); ++j) {
    const AsyncJob& job = schedule_.jobs[j];
    if (trained_[j] || !needed(job) || job.startVersion > nextVersion_) continue;
    ready.push_back(static_cast<int>(j));
    const auto samples = static_cast<std::int64_t>(p_.clients[job.client].train.size());
    all.clients += 1;
    all.samples += samples;
    if (!p_.ctx.isLocal(job.client)) continue;
    mine.clients += 1;
    mine.samples += samples;
  }
  p_.ctx.announce().startPhase(nextVersion_, RoundPhase::Training, mine, all);
  Timer timer;
  coordinated(p_.comm, [&] {
    for (int j : ready)
      if (p_.ctx.isLocal(schedule_.jobs[static_cast<std::size_t>(j)].client)) trainJob(j);
  });
  trainSeconds_ += p_.comm.allreduceMax(timer.seconds());
  for (int j : ready) trained_[static_cast<std::size_t>(j)] = 1;
  startModels_.clear();  // every job still to train starts from a version not made yet
}

void AsyncDriver::trainJob(int j) {
  const AsyncJob& job = schedule_.jobs[static_cast<std::size_t>(j)];
  const std::vector<float>& start = startModel(job.startVersion);
  Model& model = p_.model;
  model.setParams(start);
  model.setRandomContext(p_.cfg.seed, job.client, job.index);
  // The job's streams are keyed by the client's job number; its learning rate follows the server's
  // progress (train.lr_schedule over versions).
  ClientContext c{p_.ctx, p_.clients[job.client], job.index, model, p_.trainer, start};
  c.train = p_.hooks.training(job.startVersion, trainingForRound(p_.cfg.train, job.startVersion, p_.cfg.rounds));
  if (job.localSteps > 0) {  // FedCompass: exactly the steps the scheduler assigned
    c.train.epochs = epochsForSteps(p_.clients[job.client].numTrain(), c.train.batch, job.localSteps);
    c.maxSteps = job.localSteps;
  }
  const std::int64_t before = p_.trainer.samplesTrained();
  ClientUpdate update;
  alg_.clientUpdate(c, update);
  const float* sent = update.vector ? update.vector : model.params();
  const auto n = static_cast<std::size_t>(model.numParams());
  std::vector<float> u = spareUpdate();
  u.assign(sent, sent + n);
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(u[i]))
      throw NumericError(fmt("client ", job.client, " job ", job.index, " (from version ", job.startVersion,
                             "): the update contains ", u[i]));
  if (alg_.upload() == AsyncAlgorithm::Upload::Delta)
    for (std::size_t i = 0; i < n; ++i) u[i] -= start[i];
  updates_[j] = std::move(u);
  p_.ctx.announce().clientDone(p_.trainer.samplesTrained() - before);
}

bool AsyncDriver::versionReady(int version) const {
  for (int j : schedule_.versions[static_cast<std::size_t>(version - 1)].jobs)
    if (!trained_[static_cast<std::size_t>(j)]) return false;
  return true;
}

// The server step's input of `version` (every rank): its jobs' silos, staleness and samples.
AsyncServerInput AsyncDriver::serverInput(const AsyncVersion& version, int made) {
  AsyncServerInput in;
  in.version = made;
  in.sum = &sum_;
  in.serverOptimizer = serverOptimizer_.get();
  for (int j : version.jobs) {
    const AsyncJob& job = schedule_.jobs[static_cast<std::size_t>(j)];
    in.sampleSum += static_cast<double>(p_.clients[job.client].numTrain());
    in.clients.push_back(job.client);
    in.staleness.push_back(schedule_.staleness(j));
  }
  return in;
}

// A version of several updates whose jobs are all trained can have its sum reduced early, with the
// version before it (fl/version_sums.hpp).
bool AsyncDriver::batchable(int made) const {
  return made <= p_.cfg.rounds && schedule_.versions[static_cast<std::size_t>(made - 1)].jobs.size() > 1 &&
         versionReady(made);
}

// Reduces to rank 0, in one call, the sums of `first` and of the batchable versions after it. The
// updates stay in updates_ until their version is made: a checkpoint between the versions of a batch
// saves them, and a resume reduces them again (the same sums, bit for bit).
void AsyncDriver::reduceBatch(int first) {
  int end = first + 1;
  while (static_cast<std::size_t>(end - first) < sums_.maxVersions() && batchable(end)) ++end;
  sums_.start(first, end - first);
  for (int v = first; v < end; ++v)
    for (int j : schedule_.versions[static_cast<std::size_t>(v - 1)].jobs) {
      const AsyncJob& job = schedule_.jobs[static_cast<std::size_t>(j)];
      if (!p_.ctx.isLocal(job.client)) continue;
      const auto it = updates_.find(j);
      FEDSILO_ASSERT(it != updates_.end(), "asynchronous driver: job ", j, " of client ", job.client, " not trained");
      const double samples = static_cast<double>(p_.clients[job.client].numTrain());
      sums_.add(v, it->second.data(), alg_.updateWeight(samples, schedule_.staleness(j)));
    }
  sums_.reduce(p_.comm);
}

// The update of a version of one: sent as it is from its silo's rank (no reduction, and its weighted
// value is exact all the same).
std::vector<float> AsyncDriver::broadcastSingleUpdate(const AsyncVersion& version) {
  const int j = version.jobs[0];
  const int client = schedule_.jobs[static_cast<std::size_t>(j)].client;
  std::vector<float> one = spareUpdate();
  one.resize(static_cast<std::size_t>(p_.model.numParams()));
  if (p_.ctx.isLocal(client)) one = std::move(updates_.at(j));  // consumed: erased by the caller
  p_.comm.bcast(one.data(), one.size(), p_.placement.owner(client));
  return one;
}

// The memory of a consumed update, for the next job's (an update is the model's size: fresh pages for
// each job would be faulted in each time).
std::vector<float> AsyncDriver::spareUpdate() {
  if (spare_.empty()) return {};
  std::vector<float> u = std::move(spare_.back());
  spare_.pop_back();
  return u;
}

// Keeps the memory of an update for the next jobs, at most one per local silo (what a wave of jobs needs).
void AsyncDriver::keepSpare(std::vector<float>&& u) {
  if (!u.empty() && spare_.size() < static_cast<std::size_t>(p_.placement.count(p_.comm.rank())))
    spare_.push_back(std::move(u));
}

// The local updates of `version` leave the buffer.
void AsyncDriver::consumeUpdates(const AsyncVersion& version) {
  for (int j : version.jobs) {
    const auto it = updates_.find(j);
    if (it == updates_.end()) continue;
    keepSpare(std::move(it->second));
    updates_.erase(it);
  }
}

// The buffered updates of `version`, weighted by the algorithm, summed exactly on rank 0; the server
// step there; the version made (`made`) broadcast. Its local updates are consumed.
void AsyncDriver::reduceAndStep(const AsyncVersion& version, int made) {
  const bool single = version.jobs.size() == 1;
  AsyncServerInput in = serverInput(version, made);
  std::vector<float> one;
  if (single)
    one = broadcastSingleUpdate(version);
  else if (!sums_.holds(made))
    reduceBatch(made);
  consumeUpdates(version);
  coordinated(p_.comm, [&] {
    if (!p_.comm.isRoot()) return;
    if (single) {
      const double w = alg_.updateWeight(in.sampleSum, in.staleness[0]);
      sum_.resize(one.size());
      for (std::size_t i = 0; i < one.size(); ++i) sum_[i] = w * static_cast<double>(one[i]);
    } else {
      sums_.values(made, sum_);
    }
    alg_.serverStep(p_.ctx, in, p_.global);
    for (float v : p_.global)
      if (!std::isfinite(v)) throw NumericError(fmt("version ", made, ": the global model contains ", v));
  });
  keepSpare(std::move(one));
  p_.comm.bcast(p_.global.data(), p_.global.size(), 0);
}

// The new version is the start model of jobs still to train: kept, as later versions replace it.
void AsyncDriver::keepStartModel() {
  for (std::size_t j = 0; j < schedule_.jobs.size(); ++j) {
    const AsyncJob& job = schedule_.jobs[j];
    if (!trained_[j] && needed(job) && job.startVersion == nextVersion_) {
      startModels_[nextVersion_] = p_.global;
      return;
    }
  }
}

RoundSummary AsyncDriver::stepVersion(RecordSink& sink) {
  Timer timer;
  const int made = nextVersion_ + 1;
  const AsyncVersion& version = schedule_.versions[static_cast<std::size_t>(made - 1)];
  reduceAndStep(version, made);
  nextVersion_ = made;
  keepStartModel();
  RoundSummary summary;
  summary.round = made - 1;
  std::vector<int> clients;
  for (int j : version.jobs) clients.push_back(schedule_.jobs[static_cast<std::size_t>(j)].client);
  std::sort(clients.begin(), clients.end());
  summary.participants = static_cast<int>(std::unique(clients.begin(), clients.end()) - clients.begin());
  summary.simTime = version.time;
  summary.simSeconds = version.time - (made > 1 ? schedule_.versions[static_cast<std::size_t>(made - 2)].time : 0.0);
  ClientFigures figures(p_.placement.count(p_.comm.rank()));
  rounds_.evaluateAfterAggregation(summary.round, evaluated_[static_cast<std::size_t>(made - 1)] != 0, summary,
                                   figures);
  rounds_.simRound().noteAccuracyAt(summary.round, summary.evaluated, summary.globalAccuracy,
                                    summary.meanClientAccuracy, version.time);
  summary.trainSeconds = trainSeconds_;
  summary.seconds = p_.comm.allreduceMax(timer.seconds()) + trainSeconds_;
  trainSeconds_ = 0.0;
  recordVersion(sink, summary, figures, version);
  return summary;
}

// One /rounds row per version: the round driver's figures, the simulated clock, and per silo whether
// its update entered this version (`participated`, its share in `weight`) and its staleness (NaN where
// it did not enter; the largest where a fast silo entered twice).
void AsyncDriver::recordVersion(RecordSink& sink, const RoundSummary& summary, const ClientFigures& figures,
                                const AsyncVersion& version) const {
  const int local = p_.placement.count(p_.comm.rank());
  std::vector<double> participated(static_cast<std::size_t>(local), 0.0), weight(participated),
      staleness(static_cast<std::size_t>(local), kNaN), upload(participated), download(participated);
  double weightSum = 0.0;
  for (int j : version.jobs) {
    const AsyncJob& job = schedule_.jobs[static_cast<std::size_t>(j)];
    const double w = alg_.updateWeight(static_cast<double>(p_.clients[job.client].numTrain()), schedule_.staleness(j));
    weightSum += w;
    if (!p_.ctx.isLocal(job.client)) continue;
    const auto i = static_cast<std::size_t>(p_.placement.slot(job.client));
    participated[i] = 1.0;
    weight[i] += w;
    upload[i] += uploadBytes_;
    download[i] += downloadBytes_;
    const double tau = schedule_.staleness(j);
    staleness[i] = std::isnan(staleness[i]) ? tau : std::max(staleness[i], tau);
  }
  for (double& w : weight) w = weightSum > 0.0 ? w / weightSum : 0.0;
  appendEvaluationRow(sink, summary, figures);
  sink.appendRoundClients("weight", weight);
  sink.appendRoundClients("participated", participated);
  sink.appendRoundScalar("seconds", summary.seconds);
  sink.appendRoundScalar("train_seconds", summary.trainSeconds);
  sink.appendRoundClients("client_upload_bytes", upload);
  sink.appendRoundClients("client_download_bytes", download);
  sink.appendRoundScalar("sim_seconds", summary.simSeconds);
  sink.appendRoundScalar("sim_time", summary.simTime);
  sink.appendRoundClients("staleness", staleness);
  sink.endRound();
}

void AsyncDriver::checkpoint(StateArchive& ar) {
  const auto n = static_cast<std::size_t>(p_.model.numParams());
  // Replicated: the next version, the trained jobs still to enter a version, the start models kept.
  std::vector<double> scalars{static_cast<double>(nextVersion_)}, trainedJobs, versions;
  std::vector<float> models;
  if (ar.saving()) {
    for (std::size_t j = 0; j < trained_.size(); ++j)
      if (trained_[j] && needed(schedule_.jobs[j])) trainedJobs.push_back(static_cast<double>(j));
    for (const auto& [v, model] : startModels_) {
      versions.push_back(v);
      models.insert(models.end(), model.begin(), model.end());
    }
  }
  ar.doubles("async/scalars", scalars);
  ar.doubles("async/trained_jobs", trainedJobs);
  ar.doubles("async/start_versions", versions);
  ar.floats("async/start_models", models);
  // Per client: its trained updates waiting in the buffer or in flight (job ids, then the values).
  std::unordered_map<int, std::vector<double>> jobsOf;
  std::unordered_map<int, std::vector<float>> valuesOf;
  if (ar.saving()) {
    std::vector<int> mine;
    for (const auto& [j, u] : updates_) mine.push_back(j);
    std::sort(mine.begin(), mine.end());
    for (int j : mine) {
      const int k = schedule_.jobs[static_cast<std::size_t>(j)].client;
      jobsOf[k].push_back(j);
      const std::vector<float>& u = updates_.at(j);
      valuesOf[k].insert(valuesOf[k].end(), u.begin(), u.end());
    }
  }
  ar.clientDoubles("async/update_jobs", jobsOf);
  ar.clientFloats("async/updates", valuesOf);
  std::vector<double> optimizer = ar.saving() && serverOptimizer_ ? serverOptimizer_->state() : std::vector<double>{};
  if (ar.saving() && serverOptimizer_) p_.comm.bcast(optimizer, 0);  // the state lives on rank 0
  ar.doubles("async/server_optimizer", optimizer);
  if (ar.saving()) return;
  FEDSILO_ASSERT(scalars.size() == 1 && models.size() == versions.size() * n, "checkpoint async state does not fit");
  nextVersion_ = static_cast<int>(scalars[0]);
  FEDSILO_ASSERT(nextVersion_ >= 0 && nextVersion_ <= static_cast<int>(schedule_.versions.size()),
                 "checkpoint async version ", nextVersion_, " outside the schedule");
  trained_.assign(schedule_.jobs.size(), 0);
  for (double j : trainedJobs) trained_.at(static_cast<std::size_t>(j)) = 1;
  startModels_.clear();
  sums_.forget();
  for (std::size_t i = 0; i < versions.size(); ++i)
    startModels_[static_cast<int>(versions[i])] = std::vector<float>(
        models.begin() + static_cast<std::ptrdiff_t>(i * n), models.begin() + static_cast<std::ptrdiff_t>((i + 1) * n));
  updates_.clear();
  for (const auto& [k, jobs] : jobsOf) {
    const std::vector<float>& values = valuesOf.at(k);
    FEDSILO_ASSERT(values.size() == jobs.size() * n, "checkpoint async updates of client ", k, " do not fit");
    for (std::size_t i = 0; i < jobs.size(); ++i)
      updates_[static_cast<int>(jobs[i])] =
          std::vector<float>(values.begin() + static_cast<std::ptrdiff_t>(i * n),
                             values.begin() + static_cast<std::ptrdiff_t>((i + 1) * n));
  }
  if (serverOptimizer_ && !optimizer.empty()) serverOptimizer_->setState(optimizer);
}

}  // namespace fedsilo
