// What privacy costs per step and per round, as ratios measured within one run (figures, never
// assertions; docs/privacy.md, "Cost"). Thread CPU time, alternating the variants, median of the
// repetitions, so that other jobs on a shared machine move both sides alike.
//
//   DP-SGD     one training step of the MLP 784-200-200-10 (199,210 parameters) at batch B:
//              plain = lossAndGradient + SGD step; fused = sgdStep (the step the trainer takes without DP
//              when the optimizer is plain SGD: the update inside the weight-gradient kernel); DP-SGD =
//              lossAndClippedGradient (ghost norms and the second backward) + the noise and the 1 / B
//              scaling in one pass (addScaledNormalsF32, as fl/dp_sgd.cpp) + SGD step; dp64 = the same
//              step with the double-precision ziggurat (addScaledNormals) for the noise, for comparison
//   DP-SGD CNN the same on cnn_mcmahan and cnn_playerfl (1 x 28 x 28, 10 classes) at batch 64: plain =
//              lossAndGradient + SGD step, fused = sgdStep, DP-SGD = lossAndClippedGradient (the per-example
//              norms of every layer, materialised or ghost, and the second backward) + noise + SGD step;
//              memory: the growth of the peak resident set while building the model and running plain
//              steps, and that growth once DP-SGD steps have run as well (mem_x = their ratio)
//   SecAgg     one round's aggregation of n clients' MLP updates: plain = n exact accumulates
//              (ExactSum::addScaled); secure = each client's own accumulate + its n masks + the modular
//              add, and the server's unmasking (d of the n clients dropped)
//
//   build/bench/fedsilo_privacy_bench [repetitions]      (default 21)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "core/exact_sum.hpp"
#include "core/rng.hpp"
#include "nn/presets.hpp"
#include "optim/optimizer.hpp"
#include "privacy/gaussian.hpp"
#include "privacy/gaussian_f32.hpp"
#include "privacy/secure_aggregation.hpp"

#include "thread_clock.hpp"

using namespace fedsilo;

namespace {

// Median seconds per call of each function, the functions run alternately `reps` times (`inner`
// calls each time).
std::vector<double> medians(const std::vector<std::function<void()>>& fs, int reps, int inner) {
  std::vector<std::vector<double>> t(fs.size());
  for (auto& f : fs) f();  // warm-up
  for (int r = 0; r < reps; ++r)
    for (std::size_t i = 0; i < fs.size(); ++i) {
      const double t0 = threadSeconds();
      for (int k = 0; k < inner; ++k) fs[i]();
      t[i].push_back((threadSeconds() - t0) / inner);
    }
  std::vector<double> out;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    out.push_back(v[v.size() / 2]);
  }
  return out;
}

// A model of `preset` on 1 x 28 x 28 inputs and 10 classes, reserved for `batch`, with one fixed batch of
// uniform inputs and cycling labels, and plain SGD (train.optimizer = sgd, lr 1e-4, no momentum or decay)
// over every parameter.
struct StepFixture {
  std::unique_ptr<Model> model;
  std::vector<float> x;
  std::vector<std::int32_t> y;
  std::unique_ptr<Optimizer> sgd;
  OptimizerState state;
  std::vector<ParamSegment> all;
  void sgdStep() { sgd->step(model->params(), model->grads(), all, state); }
};

StepFixture stepFixture(ModelPreset preset, int batch) {
  StepFixture f;
  ModelConfig cfg;
  cfg.name = preset;
  f.model = buildModel<float>(cfg, InputSpec{Shape{1, 28, 28}, 10, 0});
  Rng init(0, -1, -1, Purpose::Init);
  f.model->initialize(init);
  f.model->reserve(batch);
  f.x.resize(784u * batch);
  Rng data(1, -1, -1, Purpose::Misc);
  for (float& v : f.x) v = static_cast<float>(data.uniform());
  f.y.resize(batch);
  for (int j = 0; j < batch; ++j) f.y[j] = j % 10;
  OptimizerSettings plain;
  plain.lr = 1e-4;
  f.sgd = std::make_unique<Optimizer>(plain);
  const std::size_t P = static_cast<std::size_t>(f.model->numParams());
  f.sgd->prepare(f.state, P, 1);
  f.all = {{0, P, 0}};
  return f;
}

void dpSgd(int reps) {
  std::printf("DP-SGD step vs plain step, MLP 784-200-200-10 (median of %d, thread CPU time)\n", reps);
  std::printf("%6s %10s %10s %12s %10s %10s %10s %10s %8s %8s %8s %8s\n", "batch", "plain_ms", "fused_ms", "clipped_ms",
              "noise_ms", "noise64_ms", "dp_ms", "dp64_ms", "clip_x", "total_x", "total64_x", "fused_x");
  for (int batch : {32, 64, 128, 256, 512}) {
    StepFixture f = stepFixture(ModelPreset::Mlp, batch);
    Model* m = f.model.get();
    const std::vector<float>& x = f.x;
    const std::vector<std::int32_t>& y = f.y;
    const std::size_t P = static_cast<std::size_t>(m->numParams());
    std::int64_t step = 0;
    auto noise = [&] {
      Rng key(2, 3, 4, Purpose::DpSgdNoise, static_cast<std::uint64_t>(step++));
      addScaledNormalsF32(m->grads(), P, 1.1f, key, 1.0f / static_cast<float>(batch));
    };
    auto noise64 = [&] {
      Rng key(2, 3, 4, Purpose::DpSgdNoise, static_cast<std::uint64_t>(step++));
      addScaledNormals(m->grads(), P, 1.1, key, 1.0f / static_cast<float>(batch));
    };
    const int inner = std::max(1, 256 / batch);
    const std::vector<double> t = medians(
        {[&] {
           m->lossAndGradient(x.data(), y.data(), batch);
           f.sgdStep();
         },
         [&] { m->sgdStep(x.data(), y.data(), batch, 1e-4f); },
         [&] { m->lossAndClippedGradient(x.data(), y.data(), batch, 1.0); },
         [&] { noise(); },
         [&] { noise64(); },
         [&] {
           m->lossAndClippedGradient(x.data(), y.data(), batch, 1.0);
           noise();
           f.sgdStep();
         },
         [&] {
           m->lossAndClippedGradient(x.data(), y.data(), batch, 1.0);
           noise64();
           f.sgdStep();
         }},
        reps, inner);
    std::printf("%6d %10.3f %10.3f %12.3f %10.3f %10.3f %10.3f %10.3f %8.2f %8.2f %8.2f %8.2f\n", batch, 1e3 * t[0],
                1e3 * t[1], 1e3 * t[2], 1e3 * t[3], 1e3 * t[4], 1e3 * t[5], 1e3 * t[6], t[2] / t[0], t[5] / t[0],
                t[6] / t[0], t[5] / t[1]);
  }
}

// A field of /proc/self/status in KiB ("VmRSS", "VmHWM"); 0 where unreadable.
long statusKiB(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  long v = 0;
  const std::size_t n = std::strlen(field);
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, field, n) == 0 && line[n] == ':') v = std::atol(line + n + 1);
  std::fclose(f);
  return v;
}

// Resets the peak resident set (VmHWM) to the current one (Linux: clear_refs 5).
void resetPeakResident() {
  if (std::FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
}

void dpSgdCnn(int reps) {
  const int batch = 64;
  std::printf("\nDP-SGD step vs plain step on the CNN presets, batch %d (median of %d, thread CPU time)\n", batch, reps);
  std::printf("%14s %10s %10s %10s %8s %8s %12s %12s %8s\n", "model", "plain_ms", "fused_ms", "dp_ms", "total_x",
              "fused_x", "plain_MiB", "dp_MiB", "mem_x");
  for (ModelPreset preset : {ModelPreset::CnnMcMahan, ModelPreset::CnnPlayerFl}) {
    resetPeakResident();
    const long base = statusKiB("VmRSS");
    StepFixture f = stepFixture(preset, batch);
    Model* m = f.model.get();
    const std::vector<float>& x = f.x;
    const std::vector<std::int32_t>& y = f.y;
    const std::size_t P = static_cast<std::size_t>(m->numParams());
    std::int64_t step = 0;
    auto plainStep = [&] {
      m->lossAndGradient(x.data(), y.data(), batch);
      f.sgdStep();
    };
    auto dpStep = [&] {
      m->lossAndClippedGradient(x.data(), y.data(), batch, 1.0);
      Rng key(2, 3, 4, Purpose::DpSgdNoise, static_cast<std::uint64_t>(step++));
      addScaledNormalsF32(m->grads(), P, 1.1f, key, 1.0f / static_cast<float>(batch));
      f.sgdStep();
    };
    plainStep();
    m->sgdStep(x.data(), y.data(), batch, 1e-4f);
    const long plainPeak = statusKiB("VmHWM");
    dpStep();
    const long dpPeak = statusKiB("VmHWM");
    const std::vector<double> t =
        medians({plainStep, [&] { m->sgdStep(x.data(), y.data(), batch, 1e-4f); }, dpStep}, reps, 1);
    const double plainMiB = (plainPeak - base) / 1024.0, dpMiB = (dpPeak - base) / 1024.0;
    std::printf("%14s %10.2f %10.2f %10.2f %8.2f %8.2f %12.1f %12.1f %8.2f\n",
                preset == ModelPreset::CnnMcMahan ? "cnn_mcmahan" : "cnn_playerfl", 1e3 * t[0], 1e3 * t[1], 1e3 * t[2],
                t[2] / t[0], t[2] / t[1], plainMiB, dpMiB, dpMiB / plainMiB);
  }
}

void secureAggregation(int reps) {
  const std::size_t words = 199210 + 3;  // the MLP's reduced values and its 3 block weights
  std::printf("\nSecure aggregation of one round, %zu words per client (median of %d, thread CPU time)\n", words, reps);
  std::printf("%8s %8s %10s %12s %12s %8s\n", "clients", "dropped", "plain_ms", "masking_ms", "unmask_ms", "total_x");
  std::vector<float> update(words);
  Rng data(5, -1, -1, Purpose::Misc);
  for (float& v : update) v = static_cast<float>(data.normal());
  for (const auto& setting : {std::pair{10, 0}, std::pair{10, 2}, std::pair{30, 0}, std::pair{30, 6}}) {
    const int n = setting.first, d = setting.second;  // clients, dropped
    std::vector<int> clients;
    for (int k = 0; k < n; ++k) clients.push_back(k);
    std::vector<int> survivors(clients.begin() + d, clients.end());
    const SecureAggregation protocol(7, 3, clients, words);
    ExactSum acc(words), own(words);
    const std::vector<double> t = medians(
        {[&] {
           acc.clear();
           for (int k = 0; k < n; ++k) acc.addScaled(0, update.data(), words, 1.0 + k);
         },
         [&] {
           acc.clear();
           for (int k : survivors) {
             own.clear();
             own.addScaled(0, update.data(), words, 1.0 + k);
             protocol.applyMasks(k, own.data());
             addWordsMod(acc.data(), own.data(), words);
           }
         },
         [&] { protocol.unmask(acc.data(), survivors); }},
        reps, 1);
    std::printf("%8d %8d %10.3f %12.3f %12.3f %8.2f\n", n, d, 1e3 * t[0], 1e3 * t[1], 1e3 * t[2], (t[1] + t[2]) / t[0]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 21;
  dpSgd(reps);
  dpSgdCnn(reps);
  secureAggregation(reps);
  return 0;
}
