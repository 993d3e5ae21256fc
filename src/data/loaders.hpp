// Dataset loaders. Every loader validates its input and throws DataError (exit code 3) with a
// one-line message naming the file and what was wrong.
#pragma once
#include <string>

#include "core/config.hpp"
#include "data/dataset.hpp"

namespace fedsilo {

// Reads an IDX file (gzip-compressed or plain; detected by magic bytes, not by name). Validates the
// magic (0x0000080D: dtype 0x08 = uint8, 0x0D = ndim), dimensions and the file length.
struct IdxArray {
  std::vector<int> dims;
  std::vector<std::uint8_t> data;
};
IdxArray readIdx(const std::string& path);

// Loads the dataset named by cfg.dataset (fashion_mnist, mnist, emnist, cifar10, leaf, synthetic, csv,
// hdf5, sequence). Throws ConfigError for an unknown name, DataError for bad files.
DataBundle loadDataset(const DataConfig& cfg, std::uint64_t seed);

// Reads a .npy file of integers (int8/16/32/64, uint8/16/32, little-endian, C order, 1-D) into int64.
std::vector<std::int64_t> readNpyInts(const std::string& path);

}  // namespace fedsilo
