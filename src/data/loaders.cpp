// loadDataset: one dispatch table from dataset name to loader (DESIGN.md: explicit tables, no
// self-registration). The loaders live in their own files, one per format.
#include "data/loaders.hpp"

#include <cmath>
#include <functional>
#include <utility>

#include "core/error.hpp"
#include "data/loader_util.hpp"

namespace fedsilo {

namespace {

using Loader = std::function<DataBundle(const DataConfig&, std::uint64_t)>;

const std::vector<std::pair<std::string, Loader>>& loaderTable() {
  static const std::vector<std::pair<std::string, Loader>> table = {
      {"fashion_mnist", [](const DataConfig& c, std::uint64_t) { return detail::loadIdxFamily(c); }},
      {"mnist", [](const DataConfig& c, std::uint64_t) { return detail::loadIdxFamily(c); }},
      {"emnist", [](const DataConfig& c, std::uint64_t) { return detail::loadIdxFamily(c); }},
      {"cifar10", [](const DataConfig& c, std::uint64_t) { return detail::loadCifar10(c); }},
      {"leaf", [](const DataConfig& c, std::uint64_t) { return detail::loadLeaf(c); }},
      {"synthetic", detail::makeSynthetic},
      {"csv", detail::loadCsv},
      {"hdf5", detail::loadHdf5},
      {"sequence", detail::makeSequence},
  };
  return table;
}

// What every consumer relies on. Loaders report bad input with its file and row as they read it;
// these checks are the backstop for every dataset (generated ones included), and a broken
// invariant (a label outside [0, numClasses)) is a loader bug.
void checkBundle(const DataBundle& b, const DataConfig& cfg) {
  for (const auto& [ds, part] : {std::pair{&b.train, "training"}, std::pair{&b.test, "test"}}) {
    const std::size_t dim = static_cast<std::size_t>(ds->dim());
    const std::size_t want = static_cast<std::size_t>(ds->size()) * dim;
    FEDSILO_ASSERT((ds->isU8() ? ds->u8.size() : ds->f32.size()) == want, "dataset ", cfg.dataset,
                   ": feature buffer does not match labels x shape");
    if (ds->numClasses > cfg.maxClasses)
      throw DataError(fmt("dataset '", cfg.dataset, "' has ", ds->numClasses, " classes, more than data.max_classes = ",
                          cfg.maxClasses));
    for (auto y : ds->labels) FEDSILO_ASSERT(y >= 0 && y < ds->numClasses, "dataset ", cfg.dataset, ": label ", y);
    for (std::size_t k = 0; k < ds->f32.size(); ++k)
      if (!std::isfinite(ds->f32[k]))
        throw DataError(fmt("dataset '", cfg.dataset, "': ", part, " sample ", k / dim, ", feature ", k % dim, " is ",
                            ds->f32[k], ", not a finite number"));
  }
  // Token datasets: every id must index the embedding table (DataBundle::vocabSize).
  FEDSILO_ASSERT(b.vocabulary.empty() || b.vocabSize >= static_cast<int>(b.vocabulary.size()), "vocabSize");
  if (b.vocabSize > 0)
    for (const Dataset* ds : {&b.train, &b.test})
      for (float t : ds->f32) FEDSILO_ASSERT(t >= 0.0f && t < static_cast<float>(b.vocabSize), "token id ", t);
  FEDSILO_ASSERT(b.naturalClient.empty() || b.naturalClient.size() == static_cast<std::size_t>(b.train.size()));
  FEDSILO_ASSERT(b.naturalClientTest.empty() || b.naturalClientTest.size() == static_cast<std::size_t>(b.test.size()));
}

}  // namespace

std::string defaultDataDir(const std::string& dataset) {
  // Debian's dataset-fashion-mnist package installs here (PERF_BASELINE.md section 2). MNIST and
  // EMNIST have no Debian package, hence no default.
  return dataset == "fashion_mnist" ? "/usr/share/datasets/fashion-mnist" : "";
}

DataBundle loadDataset(const DataConfig& cfg, std::uint64_t seed) {
  for (const auto& [name, load] : loaderTable()) {
    if (name != cfg.dataset) continue;
    DataBundle b = load(cfg, seed);
    b.name = cfg.dataset;
    checkBundle(b, cfg);
    if (b.train.size() == 0) throw DataError(fmt("dataset '", cfg.dataset, "' has no training samples"));
    return b;
  }
  std::string names;
  for (const auto& entry : loaderTable()) names += (names.empty() ? "" : ", ") + entry.first;
  throw ConfigError(fmt("unknown data.dataset '", cfg.dataset, "' (valid: ", names, ")"));
}

}  // namespace fedsilo
