// Test helpers for model-level kernel tests: a model initialised and reserved for a batch, and
// deterministic batches (inputs drawn by their own seed, labels spread over the classes), so that two
// models given the same calls see the same data.
#pragma once
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/rng.hpp"
#include "nn/model.hpp"
#include "nn/presets.hpp"

namespace fedsilo::test {

// m initialised from Rng(initSeed, Init), with workspaces for `reserve` samples and fusion on or off.
inline std::unique_ptr<Model> ready(std::unique_ptr<Model> m, std::uint64_t initSeed, int reserve, bool fusion) {
  Rng rng(initSeed, -1, -1, Purpose::Init);
  m->initialize(rng);
  m->reserve(reserve);
  m->setFusion(fusion);
  return m;
}

// `batch` samples of `in`'s shape, uniform in [lo, hi).
inline std::vector<float> uniformBatch(const InputSpec& in, int batch, std::uint64_t seed, double lo, double hi) {
  Rng r(seed, -1, -1, Purpose::Misc);
  std::vector<float> x(static_cast<std::size_t>(in.shape.size()) * batch);
  for (auto& v : x) v = static_cast<float>(r.uniform(lo, hi));
  return x;
}

// Labels (j * step + offset) mod classes for j = 0 .. batch-1.
inline std::vector<std::int32_t> spreadLabels(int batch, int classes, int step, int offset) {
  std::vector<std::int32_t> y(static_cast<std::size_t>(batch));
  for (int j = 0; j < batch; ++j) y[static_cast<std::size_t>(j)] = (j * step + offset) % classes;
  return y;
}

}  // namespace fedsilo::test
