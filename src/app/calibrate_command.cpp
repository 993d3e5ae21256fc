#include "app/calibrate_command.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "app/config_parser.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/timer.hpp"
#include "data/loaders.hpp"
#include "fl/local_trainer.hpp"
#include "nn/presets.hpp"

namespace fedsilo {

namespace {

constexpr double kMinSeconds = 2.0;  // timed training at least this long, after a warm-up epoch
constexpr Index kSamples = 2048;     // the first samples of the training set, one epoch per pass

struct Measured {
  double flopsPerSample = 0.0, samples = 0.0, seconds = 0.0;
  double gflops() const { return flopsPerSample * samples / seconds / 1e9; }
};

Measured measure(const ExperimentConfig& cfg) {
  const DataBundle data = loadDataset(cfg.data, cfg.seed);
  auto model = buildModel<float>(cfg.model, InputSpec{data.train.shape, data.train.numClasses, data.vocabSize});
  Rng init(cfg.seed, -1, -1, Purpose::Init);
  model->initialize(init);
  model->reserve(Model::reserveBatch(cfg.train.batch, cfg.train.batch));
  LocalTrainer trainer(data.train, cfg.train.batch);
  IndexList indices(static_cast<std::size_t>(std::min<Index>(kSamples, data.train.size())));
  for (std::size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<Index>(i);
  if (indices.empty()) throw DataError("calibrate: the dataset has no training samples");
  TrainOptions opt = TrainOptions::from(cfg.train);
  opt.epochs = 1;
  Rng warm(cfg.seed, 0, 0, Purpose::Shuffle);
  trainer.train(*model, indices, opt, warm, 0, 0);
  Measured m;
  m.flopsPerSample = model->trainFlopsPerSample();
  const std::int64_t before = trainer.samplesTrained();
  Timer timer;
  for (int pass = 1; timer.seconds() < kMinSeconds; ++pass) {
    Rng shuffle(cfg.seed, 0, pass, Purpose::Shuffle);
    trainer.train(*model, indices, opt, shuffle, 0, pass);
  }
  m.seconds = timer.seconds();
  m.samples = static_cast<double>(trainer.samplesTrained() - before);
  return m;
}

}  // namespace

int runCalibrateCommand(int argc, char** argv) {
  try {
    const ParseOutcome parsed = parseCommandLine(argc, argv);
    if (parsed.action == ParseOutcome::Action::Help || parsed.action == ParseOutcome::Action::Version) {
      std::fputs(parsed.text.c_str(), stdout);
      return 0;
    }
    const ExperimentConfig& cfg = parsed.config;
    const Measured m = measure(cfg);
    std::printf("model %s, dataset %s, batch %d, optimizer as configured, one core\n", nameOf(cfg.model.name),
                nameOf(cfg.data.dataset), cfg.train.batch);
    std::printf("training FLOPs per sample: %.0f\n", m.flopsPerSample);
    std::printf("measured: %.0f samples in %.3f s (%.1f samples/s)\n", m.samples, m.seconds, m.samples / m.seconds);
    std::printf("system.compute_gflops = %.4g\n", m.gflops());
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "fedsilo: error: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fedsilo: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace fedsilo
