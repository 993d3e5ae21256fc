#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>

#include "data/loaders.hpp"
#include "data_test_util.hpp"
#include "support/test_support.hpp"

namespace fedsilo {
namespace {

using test::expectDataError;
using test::idxBytes;

std::vector<std::uint8_t> ramp(std::size_t n, int mul = 1) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>((i * mul) & 0xff);
  return v;
}

TEST(Idx, ReadsPlainFile) {
  const std::string dir = test::tempDir("idx_plain");
  const std::string p = dir + "/a.idx";
  test::writeBytes(p, idxBytes({2, 3, 4}, ramp(24)));
  const IdxArray a = readIdx(p);
  EXPECT_EQ(a.dims, (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(a.data, ramp(24));
}

TEST(Idx, ReadsGzipByMagicNotName) {
  const std::string dir = test::tempDir("idx_gz");
  const std::string p = dir + "/no_gz_suffix";
  test::writeGzip(p, idxBytes({300}, ramp(300, 7)));
  const IdxArray a = readIdx(p);
  EXPECT_EQ(a.dims, (std::vector<int>{300}));
  EXPECT_EQ(a.data, ramp(300, 7));
}

TEST(Idx, RejectsWrongMagic) {
  const std::string dir = test::tempDir("idx_magic");
  std::string bytes = idxBytes({4}, ramp(4));
  bytes[1] = 1;
  test::writeBytes(dir + "/bad1", bytes);
  expectDataError([&] { readIdx(dir + "/bad1"); }, {"bad1", "magic"});
  bytes = idxBytes({4}, ramp(4));
  bytes[2] = 0x0D;  // float element type
  test::writeBytes(dir + "/bad2", bytes);
  expectDataError([&] { readIdx(dir + "/bad2"); }, {"bad2", "element type"});
  bytes = idxBytes({4}, ramp(4));
  bytes[3] = 0;  // zero dimensions
  test::writeBytes(dir + "/bad3", bytes);
  expectDataError([&] { readIdx(dir + "/bad3"); }, {"bad3"});
}

TEST(Idx, RejectsTruncatedPayloadPlainAndGzip) {
  const std::string dir = test::tempDir("idx_trunc");
  std::string bytes = idxBytes({10, 5}, ramp(50));
  bytes.resize(bytes.size() - 7);
  test::writeBytes(dir + "/t.idx", bytes);
  // 12-byte header + 50 payload = 62 expected; 55 present.
  expectDataError([&] { readIdx(dir + "/t.idx"); }, {"t.idx", "truncated", "62", "55"});
  test::writeGzip(dir + "/t.idx.gz", bytes);
  expectDataError([&] { readIdx(dir + "/t.idx.gz"); }, {"t.idx.gz", "truncated", "62", "55"});
  // Header itself cut off.
  test::writeBytes(dir + "/h.idx", idxBytes({10, 5}, {}).substr(0, 9));
  expectDataError([&] { readIdx(dir + "/h.idx"); }, {"h.idx", "header"});
}

TEST(Idx, RejectsTruncatedGzipStream) {
  const std::string dir = test::tempDir("idx_gzcut");
  const std::string p = dir + "/full.gz";
  test::writeGzip(p, idxBytes({1000}, ramp(1000, 13)));
  std::ifstream in(p, std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  test::writeBytes(dir + "/cut.gz", gz.substr(0, gz.size() / 2));
  expectDataError([&] { readIdx(dir + "/cut.gz"); }, {"cut.gz"});
}

TEST(Idx, RejectsTrailingBytes) {
  const std::string dir = test::tempDir("idx_trail");
  std::string bytes = idxBytes({6}, ramp(6)) + "xyz";
  test::writeBytes(dir + "/tr.idx", bytes);
  // 8 + 6 = 14 expected, 17 present.
  expectDataError([&] { readIdx(dir + "/tr.idx"); }, {"tr.idx", "3 trailing", "14", "17"});
  test::writeGzip(dir + "/tr.gz", bytes);
  expectDataError([&] { readIdx(dir + "/tr.gz"); }, {"tr.gz", "trailing"});
}

TEST(Idx, MissingFileNamesPath) {
  expectDataError([&] { readIdx("/nonexistent/dir/x.idx"); }, {"/nonexistent/dir/x.idx"});
}

// Writes an MNIST-style directory with n train and m test images of size 28x28.
void writeMnistDir(const std::string& dir, int nTrain, int nTest, bool gz, const std::string& prefix = "",
                   int trainLabelCount = -1, std::uint8_t maxLabel = 9) {
  auto put = [&](const std::string& name, const std::string& bytes) {
    if (gz)
      test::writeGzip(dir + "/" + prefix + name + ".gz", bytes);
    else
      test::writeBytes(dir + "/" + prefix + name, bytes);
  };
  auto labels = [&](int n) {
    std::vector<std::uint8_t> l(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) l[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i % (maxLabel + 1));
    return l;
  };
  put("train-images-idx3-ubyte", idxBytes({nTrain, 28, 28}, ramp(std::size_t(nTrain) * 784, 3)));
  const int nl = trainLabelCount < 0 ? nTrain : trainLabelCount;
  put("train-labels-idx1-ubyte", idxBytes({nl}, labels(nl)));
  put("t10k-images-idx3-ubyte", idxBytes({nTest, 28, 28}, ramp(std::size_t(nTest) * 784, 5)));
  put("t10k-labels-idx1-ubyte", idxBytes({nTest}, labels(nTest)));
}

TEST(IdxLoader, MnistFromPlainAndGzipDirs) {
  for (bool gz : {false, true}) {
    const std::string dir = test::tempDir(gz ? "mnist_gz" : "mnist_plain");
    writeMnistDir(dir, 12, 4, gz);
    DataConfig cfg;
    cfg.dataset = DatasetKind::Mnist;
    cfg.dir = dir;
    const DataBundle b = loadDataset(cfg, 0);
    EXPECT_EQ(b.train.size(), 12);
    EXPECT_EQ(b.test.size(), 4);
    EXPECT_EQ(b.train.shape, (Shape{1, 28, 28}));
    EXPECT_EQ(b.train.numClasses, 10);
    EXPECT_TRUE(b.train.isU8());
    EXPECT_EQ(b.train.labels[11], 11 % 10);
    EXPECT_EQ(b.train.u8[785], static_cast<std::uint8_t>((785 * 3) & 0xff));
    EXPECT_EQ(b.test.u8[5], static_cast<std::uint8_t>(25));
  }
}

TEST(IdxLoader, MismatchedImageLabelCountsNamesFiles) {
  const std::string dir = test::tempDir("mnist_mismatch");
  writeMnistDir(dir, 12, 4, false, "", 11);
  DataConfig cfg;
  cfg.dataset = DatasetKind::Mnist;
  cfg.dir = dir;
  expectDataError([&] { loadDataset(cfg, 0); }, {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "12", "11"});
}

TEST(IdxLoader, LabelAboveClassCountRejected) {
  const std::string dir = test::tempDir("mnist_badlabel");
  writeMnistDir(dir, 12, 4, false, "", -1, 10);  // labels 0..10 with 10 classes
  DataConfig cfg;
  cfg.dataset = DatasetKind::FashionMnist;
  cfg.dir = dir;
  expectDataError([&] { loadDataset(cfg, 0); }, {"train-labels-idx1-ubyte", "label 10"});
}

TEST(IdxLoader, LabelAtOrAboveMaxClassesRejected) {
  // EMNIST takes its class count from the labels (max + 1): data.max_classes bounds it.
  const std::string dir = test::tempDir("emnist_maxclasses");
  writeMnistDir(dir, 40, 4, false, "", -1, 30);  // labels i % 31
  DataConfig cfg;
  cfg.dataset = DatasetKind::Emnist;
  cfg.dir = dir;
  cfg.maxClasses = 20;
  expectDataError([&] { loadDataset(cfg, 0); },
                  {"train-labels-idx1-ubyte", "position 20", "label 20", "[0, 20)", "data.max_classes = 20"});
  cfg.maxClasses = 31;
  EXPECT_EQ(loadDataset(cfg, 0).train.numClasses, 31);
}

TEST(IdxLoader, MissingDirOrFileNamesPath) {
  DataConfig cfg;
  cfg.dataset = DatasetKind::Mnist;
  cfg.dir = "/nonexistent/mnist_dir";
  expectDataError([&] { loadDataset(cfg, 0); }, {"/nonexistent/mnist_dir"});
  const std::string dir = test::tempDir("mnist_missing");
  writeMnistDir(dir, 3, 2, false);
  std::filesystem::remove(dir + "/t10k-labels-idx1-ubyte");
  cfg.dir = dir;
  expectDataError([&] { loadDataset(cfg, 0); }, {"t10k-labels-idx1-ubyte"});
  cfg.dir.clear();
  EXPECT_THROW(loadDataset(cfg, 0), ConfigError);  // mnist has no default directory
}

TEST(IdxLoader, EmnistTransposesAndCountsClasses) {
  const std::string dir = test::tempDir("emnist");
  writeMnistDir(dir, 30, 2, true, "emnist-letters-", -1, 26);  // labels 0..26
  DataConfig cfg;
  cfg.dataset = DatasetKind::Emnist;
  cfg.dir = dir;  // the single prefixed set is found without data.file
  const DataBundle b = loadDataset(cfg, 0);
  EXPECT_EQ(b.train.numClasses, 27);
  // Stored image 0 is ramp*3; our pixel (r, c) must be stored (c, r).
  for (int r : {0, 1, 27})
    for (int c : {0, 5, 27})
      EXPECT_EQ(b.train.u8[static_cast<std::size_t>(r * 28 + c)], static_cast<std::uint8_t>(((c * 28 + r) * 3) & 0xff));
  // Two prefixed sets are ambiguous unless data.file picks one.
  writeMnistDir(dir, 5, 2, true, "emnist-digits-");
  expectDataError([&] { loadDataset(cfg, 0); }, {"emnist-digits", "emnist-letters", "data.file"});
  cfg.file = "emnist-digits";
  EXPECT_EQ(loadDataset(cfg, 0).train.size(), 5);
}

TEST(IdxLoader, EmnistTestFilesAsDistributed) {
  // NIST's EMNIST archive names its test files "<prefix>test-..." where MNIST has "t10k-...".
  const std::string dir = test::tempDir("emnist_byclass");
  writeMnistDir(dir, 70, 3, true, "emnist-byclass-", -1, 61);  // labels 0..61: byclass's 62 classes
  for (const std::string kind : {"images-idx3-ubyte.gz", "labels-idx1-ubyte.gz"})
    std::filesystem::rename(dir + "/emnist-byclass-t10k-" + kind, dir + "/emnist-byclass-test-" + kind);
  DataConfig cfg;
  cfg.dataset = DatasetKind::Emnist;
  cfg.dir = dir;
  cfg.file = "emnist-byclass";
  const DataBundle b = loadDataset(cfg, 0);
  EXPECT_EQ(b.train.size(), 70);
  EXPECT_EQ(b.test.size(), 3);
  EXPECT_EQ(b.train.numClasses, 62);
  EXPECT_EQ(b.test.labels[2], 2);
  // Neither name present: the error names both.
  std::filesystem::remove(dir + "/emnist-byclass-test-labels-idx1-ubyte.gz");
  expectDataError([&] { loadDataset(cfg, 0); },
                  {"emnist-byclass-t10k-labels-idx1-ubyte.gz", "emnist-byclass-test-labels-idx1-ubyte.gz"});
}

TEST(IdxLoader, RealFashionMnist) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  ASSERT_TRUE(std::filesystem::exists(dir))
      << dir << " is missing: apt-get install dataset-fashion-mnist (jobs/setup.sh installs it)";
  DataConfig cfg;  // defaults: fashion_mnist, default directory
  const DataBundle b = loadDataset(cfg, 0);
  EXPECT_EQ(b.train.size(), 60000);
  EXPECT_EQ(b.test.size(), 10000);
  EXPECT_EQ(b.train.shape, (Shape{1, 28, 28}));
  EXPECT_EQ(b.train.numClasses, 10);
  // First labels straight from the raw files (8-byte IDX header, then one byte per label).
  for (auto [name, ds] : {std::pair{"train", &b.train}, std::pair{"t10k", &b.test}}) {
    gzFile f = gzopen((dir + "/" + name + "-labels-idx1-ubyte.gz").c_str(), "rb");
    ASSERT_NE(f, nullptr);
    unsigned char head[9];
    ASSERT_EQ(gzread(f, head, 9), 9);
    gzclose(f);
    EXPECT_EQ(ds->labels[0], head[8]) << name;
  }
  // Fashion-MNIST is balanced: 6000 training images per class.
  IndexList all(60000);
  for (Index i = 0; i < 60000; ++i) all[static_cast<std::size_t>(i)] = i;
  for (Index c : b.train.labelCounts(all)) EXPECT_EQ(c, 6000);
}

}  // namespace
}  // namespace fedsilo
