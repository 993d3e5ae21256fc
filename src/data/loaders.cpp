// loadDataset: one dispatch from the dataset (parsed once, by the configuration parser) to its loader
// (explicit, no self-registration). The loaders live in their own files, one per format.
#include "data/loaders.hpp"

#include <cmath>
#include <filesystem>
#include <utility>

#include "core/error.hpp"
#include "data/loader_util.hpp"

namespace fedsilo {

namespace {

namespace fs = std::filesystem;

DataBundle loadByKind(const DataConfig& cfg, std::uint64_t seed) {
  switch (cfg.dataset) {
    case DatasetKind::FashionMnist:
    case DatasetKind::Mnist:
    case DatasetKind::Emnist: return detail::loadIdxFamily(cfg);
    case DatasetKind::Cifar10: return detail::loadCifar10(cfg);
    case DatasetKind::Leaf: return detail::loadLeaf(cfg);
    case DatasetKind::Synthetic: return detail::makeSynthetic(cfg, seed);
    case DatasetKind::Csv: return detail::loadCsv(cfg, seed);
    case DatasetKind::Hdf5: return detail::loadHdf5(cfg, seed);
    case DatasetKind::Sequence: return detail::makeSequence(cfg, seed);
    case DatasetKind::Heart: return detail::loadHeart(cfg, seed);
  }
  throw RuntimeError(fmt("internal error: no loader for dataset enumerator ", static_cast<int>(cfg.dataset)));
}

// What every consumer relies on. Loaders report bad input with its file and row as they read it;
// these checks are the backstop for every dataset (generated ones included), and a broken
// invariant (a label outside [0, numClasses)) is a loader bug.
void checkBundle(const DataBundle& b, const DataConfig& cfg) {
  for (const auto& [ds, part] : {std::pair{&b.train, "training"}, std::pair{&b.test, "test"}}) {
    const std::size_t dim = static_cast<std::size_t>(ds->dim());
    const std::size_t want = static_cast<std::size_t>(ds->size()) * dim;
    FEDSILO_ASSERT((ds->isU8() ? ds->u8.size() : ds->f32.size()) == want, "dataset ", b.name,
                   ": feature buffer does not match labels x shape");
    if (ds->numClasses > cfg.maxClasses)
      throw DataError(fmt("dataset '", b.name, "' has ", ds->numClasses, " classes, more than data.max_classes = ",
                          cfg.maxClasses));
    for (auto y : ds->labels) FEDSILO_ASSERT(y >= 0 && y < ds->numClasses, "dataset ", b.name, ": label ", y);
    for (std::size_t k = 0; k < ds->f32.size(); ++k)
      if (!std::isfinite(ds->f32[k]))
        throw DataError(fmt("dataset '", b.name, "': ", part, " sample ", k / dim, ", feature ", k % dim, " is ",
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

// data.limit: the first `limit` training samples, in file order (the test set is kept whole).
void keepFirstTrainingSamples(DataBundle& b, long long limit) {
  if (limit <= 0) return;
  if (limit > b.train.size())
    throw ConfigError(fmt("data.limit = ", limit, ": dataset '", b.name, "' has only ", b.train.size(),
                          " training samples"));
  const std::size_t n = static_cast<std::size_t>(limit), dim = static_cast<std::size_t>(b.train.dim());
  if (b.train.isU8())
    b.train.u8.resize(n * dim);
  else
    b.train.f32.resize(n * dim);
  b.train.labels.resize(n);
  if (!b.naturalClient.empty()) b.naturalClient.resize(n);
}

// The heart files ship with fedsilo (data/heart_disease, installed to share/fedsilo/data). Found from
// the executable's path, so that a fresh clone's build/fedsilo and an installed bin/fedsilo both find
// them from any working directory; the installed copy first. When neither exists, the source tree's
// path, which the loader then reports as missing.
std::string shippedHeartDir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const fs::path installed = exe.parent_path().parent_path() / "share" / "fedsilo" / "data" / "heart_disease";
  const fs::path sourceTree = exe.parent_path().parent_path() / "data" / "heart_disease";
  return (fs::is_directory(installed, ec) ? installed : sourceTree).lexically_normal().string();
}

}  // namespace

std::string defaultDataDir(DatasetKind dataset) {
  // Debian's dataset-fashion-mnist package installs here. MNIST and EMNIST have no Debian package,
  // hence no default.
  if (dataset == DatasetKind::FashionMnist) return "/usr/share/datasets/fashion-mnist";
  if (dataset == DatasetKind::Heart) return shippedHeartDir();
  return "";
}

DataBundle loadDataset(const DataConfig& cfg, std::uint64_t seed) {
  DataBundle b = loadByKind(cfg, seed);
  b.name = nameOf(cfg.dataset);
  keepFirstTrainingSamples(b, cfg.limit);
  checkBundle(b, cfg);
  if (b.train.size() == 0) throw DataError(fmt("dataset '", b.name, "' has no training samples"));
  return b;
}

}  // namespace fedsilo
