// CIFAR-10, binary version (https://www.cs.toronto.edu/~kriz/cifar.html, "CIFAR-10 binary version"):
// data_batch_1.bin .. data_batch_5.bin and test_batch.bin, each a sequence of 3073-byte records:
// 1 label byte (0..9) then 3072 pixel bytes, 1024 red, 1024 green, 1024 blue, each 32x32 row-major.
// That is exactly our CHW layout, so records are copied without reordering.
#include <algorithm>

#include "core/error.hpp"
#include "data/loader_util.hpp"

namespace fedsilo::detail {

namespace {

constexpr int kPixels = 3 * 32 * 32;
constexpr int kRecord = 1 + kPixels;

void appendBatch(const std::string& path, Dataset& ds) {
  requireFile(path, "CIFAR-10 batch");
  const std::string bytes = readFileBytes(path);
  if (bytes.empty() || bytes.size() % kRecord != 0)
    throw DataError(fmt("'", path, "': size ", bytes.size(), " bytes is not a positive multiple of the ", kRecord,
                        "-byte CIFAR-10 record (", bytes.size() / kRecord, " whole records + ",
                        bytes.size() % kRecord, " bytes)"));
  const std::size_t n = bytes.size() / kRecord;
  const std::size_t base = ds.labels.size();
  ds.labels.resize(base + n);
  ds.u8.resize((base + n) * kPixels);
  for (std::size_t i = 0; i < n; ++i) {
    const auto* rec = reinterpret_cast<const std::uint8_t*>(bytes.data()) + i * kRecord;
    if (rec[0] >= 10)
      throw DataError(fmt("'", path, "': record ", i, " has label ", int(rec[0]), ", expected 0..9"));
    ds.labels[base + i] = rec[0];
    std::copy_n(rec + 1, kPixels, ds.u8.begin() + (base + i) * kPixels);
  }
}

}  // namespace

DataBundle loadCifar10(const DataConfig& cfg) {
  if (cfg.dir.empty())
    throw ConfigError("data.dir is required for dataset 'cifar10' (the cifar-10-batches-bin directory)");
  requireDir(cfg.dir, "cifar10");
  DataBundle b;
  b.name = "cifar10";
  for (Dataset* ds : {&b.train, &b.test}) {
    ds->shape = Shape{3, 32, 32};
    ds->numClasses = 10;
  }
  b.train.labels.reserve(50000);
  b.train.u8.reserve(std::size_t(50000) * kPixels);
  for (int i = 1; i <= 5; ++i) appendBatch(joinPath(cfg.dir, "data_batch_" + std::to_string(i) + ".bin"), b.train);
  appendBatch(joinPath(cfg.dir, "test_batch.bin"), b.test);
  return b;
}

}  // namespace fedsilo::detail
