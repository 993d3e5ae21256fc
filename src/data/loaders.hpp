// Dataset loaders. Every loader validates its input and throws DataError (exit code 3) with a
// one-line message naming the file and what was wrong: among others, a feature that is not a finite
// 32-bit float (naming the row and column) and a label outside [0, cfg.maxClasses) (naming the
// label and the row), found as the file is read. A buffer larger than the memory available is
// refused with OutOfMemoryError (core/memory.hpp, exit code 1) before it is allocated.
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

// dataset = heart has one silo per hospital: Cleveland, Hungary, Switzerland, Long Beach VA.
constexpr int kHeartHospitals = 4;

// Loads the dataset cfg.dataset (fashion_mnist, mnist, emnist, cifar10, leaf, synthetic, csv, hdf5,
// sequence, heart). Throws DataError for bad files, ConfigError for settings that do not fit the data.
//  * fashion_mnist / mnist / emnist: IDX files in cfg.dir (fashion_mnist defaults to
//    /usr/share/datasets/fashion-mnist), "[<prefix>-]{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]";
//    cfg.file may name the prefix (EMNIST split, e.g. "emnist-balanced"). uint8, shape {1,28,28}.
//    EMNIST images are transposed to MNIST's row-major orientation; classes = max label + 1.
//  * cifar10: cfg.dir with data_batch_1..5.bin and test_batch.bin (binary version), {3,32,32} uint8.
//  * leaf: cfg.dir/train/*.json and cfg.dir/test/*.json; natural clients = LEAF users (see
//    leaf_loader.cpp for the numeric / word / character formats and the vocabulary).
//  * csv, hdf5: cfg.file. Without a separate test set in the file (csv never has one), the last 20%
//    (floor(n/5)) of a seeded shuffle of the rows, keyed (seed, Purpose::Split), is held out as the
//    test set; both parts keep file order. CSV features are standardised with the TRAIN rows' mean/std.
//  * synthetic: Synthetic(cfg.alpha, cfg.beta), cfg.users users, 60 features, per-user 90/10 split.
//  * heart: the four UCI Heart Disease files in cfg.dir (default: the repository's data/heart_disease,
//    defaultDataDir), checked against their SHA-256; one natural client per hospital, each with its own
//    held-out test patients (heart_loader.cpp; cfg.heartVariant picks the preprocessing).
//  * sequence: built-in token-sequence classification task (cfg.users, cfg.samplesPerUser train
//    samples per user plus samplesPerUser/5 test samples, cfg.seqLength, cfg.vocabSize, numClasses or 4).
// Loaders with a natural partition fill naturalClient / naturalClientTest / numNaturalClients; text
// datasets fill vocabulary (0 = "<pad>", 1 = "<unk>") and vocabSize (= vocabulary.size()).
// cfg.limit > 0 keeps only the first cfg.limit training samples (file order; the test set stays
// whole); ConfigError when the training set is smaller.
DataBundle loadDataset(const DataConfig& cfg, std::uint64_t seed);

// The directory a dataset is read from when data.dir is empty, or "" if it has none (data.dir is
// then required). heart: <prefix>/share/fedsilo/data/heart_disease beside an installed executable,
// else the data/heart_disease of the source tree whose build directory holds the executable
// (<repository>/<build>/fedsilo), both found from the executable's own path. The configuration parser resolves it into data.dir, so the results file's
// `config` attribute names the directory actually read.
std::string defaultDataDir(DatasetKind dataset);

// Reads a .npy file of integers (int8/16/32/64, uint8/16/32, little-endian, C order, 1-D) into int64.
std::vector<std::int64_t> readNpyInts(const std::string& path);

}  // namespace fedsilo
