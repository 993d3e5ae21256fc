// Helpers shared by the loaders in src/data (not part of the module's public interface).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "data/dataset.hpp"

namespace fedsilo::detail {

// Throws DataError naming the path when it does not exist / is not a directory / not a regular file.
void requireDir(const std::string& path, const std::string& what);
void requireFile(const std::string& path, const std::string& what);
// Whole file as bytes (DataError naming the path if it cannot be opened or read).
std::string readFileBytes(const std::string& path);
// Joins a directory and a file name with exactly one '/'.
std::string joinPath(const std::string& dir, const std::string& name);

// Rows `idx` of `src` (features, labels, shape, classes, scale) as a new dataset.
Dataset takeRows(const Dataset& src, const IndexList& idx);

// Splits bundle.train into train and a held-out test set of floor(n / 5) samples: a seeded shuffle
// (Rng(seed, -1, -1, Purpose::Split, kHoldOutStream)), the last 20% of the permutation become the test
// set. Both parts keep the file's row order. naturalClient (if any) is split alongside into
// naturalClient / naturalClientTest. Used by the csv and hdf5 loaders when the file has no test set.
void holdOutTest(DataBundle& bundle, std::uint64_t seed);
constexpr std::uint64_t kHoldOutStream = 0x686f6c64;  // "hold": keeps this stream apart from splitClient's

// Class ids read from a file must lie in [0, maxClasses) (DataConfig::maxClasses). Loaders check each
// label as it is read, before anything (the number of classes, a model's output layer) is sized by it.
inline bool validClassId(long long label, int maxClasses) { return label >= 0 && label < maxClasses; }
// DataError "<where>: label <label> is outside [0, <maxClasses>) ..."; `where` names the file and row.
[[noreturn]] void badClassId(const std::string& label, int maxClasses, const std::string& where);
[[noreturn]] inline void badClassId(long long label, int maxClasses, const std::string& where) {
  badClassId(std::to_string(label), maxClasses, where);
}
// DataError when a dataset has more distinct classes than maxClasses (labels mapped to dense ids).
void requireClassCount(long long classes, int maxClasses, const std::string& what);

// Features are stored as 32-bit floats: a value is usable when it is finite and stays finite as a
// float (1e39 is a finite double but an infinite float).
bool finiteAsFloat(double v);
// DataError "<where>: <value> is not a finite number (...)"; `where` names the file, row and column.
[[noreturn]] void badFeature(const std::string& where, double value);

// Maps arbitrary values to dense ids 0..K-1 in sorted order of the distinct values.
std::vector<std::int32_t> denseIds(const std::vector<std::int64_t>& values, int* numDistinct);

// The individual loaders, dispatched by loadDataset (loaders.cpp).
DataBundle loadIdxFamily(const DataConfig& cfg);  // fashion_mnist, mnist, emnist
DataBundle loadCifar10(const DataConfig& cfg);
DataBundle loadLeaf(const DataConfig& cfg);
DataBundle loadCsv(const DataConfig& cfg, std::uint64_t seed);
DataBundle loadHdf5(const DataConfig& cfg, std::uint64_t seed);
DataBundle makeSynthetic(const DataConfig& cfg, std::uint64_t seed);
DataBundle makeSequence(const DataConfig& cfg, std::uint64_t seed);
DataBundle loadHeart(const DataConfig& cfg, std::uint64_t seed);

}  // namespace fedsilo::detail
