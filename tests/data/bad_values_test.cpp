// Bad values inside well-formed files: non-finite features and out-of-range labels are rejected by
// every loader with a DataError naming the file, the row (and column or feature) and the value,
// before anything is sized by them; a dataset larger than memory is refused before it is allocated.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "core/memory.hpp"
#include "data/loaders.hpp"
#include "data_test_util.hpp"
#include "support/test_support.hpp"

namespace fedsilo {
namespace {

using test::expectDataError;
using test::h5Write;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// ---------------------------------------------------------------- HDF5

DataConfig h5Config(const std::string& file, int maxClasses = DataConfig{}.maxClasses) {
  DataConfig cfg;
  cfg.dataset = DatasetKind::Hdf5;
  cfg.file = file;
  cfg.maxClasses = maxClasses;
  return cfg;
}

// X (n x 3 floats, or the given shape), y = i % 3, optionally X_test / y_test of 2 rows.
void writeH5(const std::string& path, std::vector<float> X, const std::vector<hsize_t>& dims,
             std::vector<std::int64_t> y, const std::vector<float>& Xt = {}, const std::vector<std::int64_t>& yt = {}) {
  const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  h5Write(f, "X", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, dims, X.data());
  h5Write(f, "y", H5T_NATIVE_INT64, H5T_STD_I64LE, {dims[0]}, y.data());
  if (!Xt.empty()) {
    std::vector<hsize_t> tdims = dims;
    tdims[0] = yt.size();
    h5Write(f, "X_test", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, tdims, Xt.data());
    h5Write(f, "y_test", H5T_NATIVE_INT64, H5T_STD_I64LE, {yt.size()}, yt.data());
  }
  H5Fclose(f);
}

std::vector<std::int64_t> cyclicLabels(std::size_t n) {
  std::vector<std::int64_t> y(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<std::int64_t>(i % 3);
  return y;
}

TEST(Hdf5Values, NonFiniteFeatureNamesFileRowAndColumn) {
  const std::string p = test::tempDir("h5nan") + "/d.h5";
  std::vector<float> X(10 * 3, 0.25f), Xt(2 * 3, 0.5f);
  X[4 * 3 + 1] = kNan;
  writeH5(p, X, {10, 3}, cyclicLabels(10));
  expectDataError([&] { loadDataset(h5Config(p), 0); }, {"d.h5", "X[4, 1]", "row 4", "nan", "not a finite number"});
  // In the explicit test set (before: a published result computed on NaN).
  X[4 * 3 + 1] = 0.0f;
  Xt[1 * 3 + 2] = -kInf;
  writeH5(p, X, {10, 3}, cyclicLabels(10), Xt, {0, 1});
  expectDataError([&] { loadDataset(h5Config(p), 0); }, {"d.h5", "X_test[1, 2]", "row 1", "-inf"});
  // Images: the index names every dimension.
  std::vector<float> img(4 * 2 * 3, 0.0f);
  img[2 * 6 + 1 * 3 + 0] = kInf;
  writeH5(p, img, {4, 2, 3}, cyclicLabels(4));
  expectDataError([&] { loadDataset(h5Config(p), 0); }, {"d.h5", "X[2, 1, 0]", "row 2", "inf"});
  // A double too large for a float becomes an infinite float when read.
  const hid_t f = H5Fcreate(p.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  std::vector<double> big(4 * 2, 1.0);
  big[3 * 2 + 1] = 1e300;
  const std::vector<std::int64_t> y = cyclicLabels(4);
  h5Write(f, "X", H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, {4, 2}, big.data());
  h5Write(f, "y", H5T_NATIVE_INT64, H5T_STD_I64LE, {4}, y.data());
  H5Fclose(f);
  expectDataError([&] { loadDataset(h5Config(p), 0); }, {"d.h5", "X[3, 1]", "inf"});
}

TEST(Hdf5Values, LabelsMustBeBelowMaxClasses) {
  const std::string p = test::tempDir("h5label") + "/d.h5";
  const std::vector<float> X(10 * 3, 0.25f), Xt(2 * 3, 0.5f);
  std::vector<std::int64_t> y = cyclicLabels(10);
  y[7] = 2147483647;
  writeH5(p, X, {10, 3}, y);
  expectDataError([&] { loadDataset(h5Config(p), 0); },
                  {"d.h5", "y[7]", "label 2147483647", "outside [0, 100000)", "data.max_classes = 100000"});
  y[7] = -1;
  writeH5(p, X, {10, 3}, y);
  expectDataError([&] { loadDataset(h5Config(p), 0); }, {"d.h5", "y[7]", "label -1"});
  // The bound is data.max_classes: label 5 needs 6 classes.
  writeH5(p, X, {10, 3}, cyclicLabels(10), Xt, {5, 0});
  expectDataError([&] { loadDataset(h5Config(p, 5), 0); }, {"d.h5", "y_test[0]", "label 5", "[0, 5)"});
  EXPECT_EQ(loadDataset(h5Config(p, 6), 0).train.numClasses, 6);
}

TEST(Hdf5Values, DeclaredHugeDatasetIsRefusedBeforeAllocating) {
  // An HDF5 dataset may declare any size without storing it: unwritten chunks read as the fill value.
  // 2^40 rows of 8 floats (32 TB) in a file of a few KB.
  const std::string p = test::tempDir("h5huge") + "/d.h5";
  const hid_t f = H5Fcreate(p.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t n = hsize_t(1) << 40;
  for (const auto& [name, type, rank] : {std::tuple{"X", H5T_IEEE_F32LE, 2}, std::tuple{"y", H5T_STD_I32LE, 1}}) {
    const hsize_t dims[2] = {n, 8}, chunk[2] = {1024, 8};
    const hid_t space = H5Screate_simple(rank, dims, nullptr);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, rank, chunk);
    const hid_t ds = H5Dcreate2(f, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    ASSERT_GE(ds, 0);
    H5Dclose(ds);
    H5Pclose(dcpl);
    H5Sclose(space);
  }
  H5Fclose(f);
  EXPECT_LT(std::filesystem::file_size(p), 1u << 20);
  try {
    loadDataset(h5Config(p), 0);
    ADD_FAILURE() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    const std::string msg = e.what();
    for (const char* part : {"out of memory: dataset 'X' of '", "d.h5' (1099511627776 x 8 values)", "needs 33554432.0 MB"})
      EXPECT_NE(msg.find(part), std::string::npos) << msg << " lacks " << part;
  }
}

// ---------------------------------------------------------------- CSV

DataConfig csvConfig(const std::string& file, int maxClasses = DataConfig{}.maxClasses) {
  DataConfig cfg;
  cfg.dataset = DatasetKind::Csv;
  cfg.file = file;
  cfg.maxClasses = maxClasses;
  return cfg;
}

// "a,b,label" and 10 rows with labels i % 3; row `badRow` (0-based, on line badRow + 2) gets `cell`
// in column `col` (0 = a, 2 = label).
std::string csvText(int badRow = -1, int col = 0, const std::string& cell = "") {
  std::string s = "a,b,label\n";
  for (int i = 0; i < 10; ++i) {
    std::string cells[3] = {std::to_string(i), std::to_string(2 * i), std::to_string(i % 3)};
    if (i == badRow) cells[col] = cell;
    s += cells[0] + "," + cells[1] + "," + cells[2] + "\n";
  }
  return s;
}

TEST(CsvValues, FeatureBeyondFloatRangeNamesLineAndColumn) {
  const std::string p = test::tempDir("csv_big") + "/d.csv";
  // 1e39 is a finite double, but an infinite float: it would turn every standardised value to NaN.
  test::writeBytes(p, csvText(6, 1, "1e39"));
  expectDataError([&] { loadDataset(csvConfig(p), 0); }, {"d.csv", "line 8", "column 'b'", "1e+39", "not a finite"});
  test::writeBytes(p, csvText(6, 1, "-3.4e38"));
  EXPECT_EQ(loadDataset(csvConfig(p), 0).train.dim(), 2);
}

TEST(CsvValues, LabelsMustBeBelowMaxClasses) {
  const std::string p = test::tempDir("csv_label") + "/d.csv";
  test::writeBytes(p, csvText(7, 2, "2147483647"));
  expectDataError([&] { loadDataset(csvConfig(p), 0); },
                  {"d.csv", "line 9", "label 2147483647", "outside [0, 100000)", "data.max_classes = 100000"});
  // Beyond 32 bits: still a number, still named (it used to be taken as text).
  test::writeBytes(p, csvText(2, 2, "3000000000"));
  expectDataError([&] { loadDataset(csvConfig(p), 0); }, {"d.csv", "line 4", "label 3000000000"});
  test::writeBytes(p, csvText(2, 2, "3"));
  expectDataError([&] { loadDataset(csvConfig(p, 3), 0); }, {"d.csv", "line 4", "label 3", "[0, 3)"});
  EXPECT_EQ(loadDataset(csvConfig(p, 4), 0).train.numClasses, 4);
  // Mapped labels (text) are bounded by their number of distinct values.
  test::writeBytes(p, "a,label\n1,cat\n2,dog\n3,emu\n4,fox\n5,cat\n");
  expectDataError([&] { loadDataset(csvConfig(p, 3), 0); }, {"d.csv", "4 distinct classes", "data.max_classes = 3"});
  EXPECT_EQ(loadDataset(csvConfig(p, 4), 0).train.numClasses, 4);
}

TEST(CsvValues, FileLargerThanMemoryIsRefusedBeforeReading) {
  const std::string p = test::tempDir("csv_mem") + "/d.csv";
  std::string text = "a,label\n";
  while (text.size() < (std::size_t(17) << 20)) text += "0.125,1\n";
  test::writeBytes(p, text);
  detail::setAvailableMemoryForTesting(std::uint64_t(16) << 20);
  try {
    loadDataset(csvConfig(p), 0);
    ADD_FAILURE() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory: the contents of '" + p + "' needs 17.0 MB, but only 16.0 MB"),
              std::string::npos)
        << e.what();
  }
  detail::setAvailableMemoryForTesting(0);
}

// ---------------------------------------------------------------- LEAF

std::string leafDir(const std::string& tag, const std::string& trainUserData) {
  const std::string dir = test::tempDir(tag);
  std::filesystem::create_directories(dir + "/train");
  std::filesystem::create_directories(dir + "/test");
  test::writeBytes(dir + "/train/t.json", R"({"users": ["u"], "user_data": {"u": )" + trainUserData + "}}");
  test::writeBytes(dir + "/test/t.json", R"({"users": [], "user_data": {}})");
  return dir;
}

DataConfig leafConfig(const std::string& dir, int maxClasses = DataConfig{}.maxClasses) {
  DataConfig cfg;
  cfg.dataset = DatasetKind::Leaf;
  cfg.dir = dir;
  cfg.maxClasses = maxClasses;
  return cfg;
}

TEST(LeafValues, FeatureBeyondFloatRangeNamesUserSampleAndFeature) {
  const std::string dir = leafDir("leaf_big", R"({"x": [[1, 2], [3, -1e39]], "y": [0, 1]})");
  expectDataError([&] { loadDataset(leafConfig(dir), 0); },
                  {"train/t.json", "user 'u' sample 1, feature 1", "-1e+39", "not a finite"});
}

TEST(LeafValues, LabelsMustBeBelowMaxClasses) {
  std::string dir = leafDir("leaf_label", R"({"x": [[1, 2], [3, 4]], "y": [0, 2147483647]})");
  expectDataError([&] { loadDataset(leafConfig(dir), 0); },
                  {"train/t.json", "user 'u' sample 1", "label 2147483647", "data.max_classes = 100000"});
  dir = leafDir("leaf_label_huge", R"({"x": [[1, 2], [3, 4]], "y": [1e30, 0]})");
  expectDataError([&] { loadDataset(leafConfig(dir), 0); }, {"user 'u' sample 0", "label 1e+30"});
  dir = leafDir("leaf_label_bound", R"({"x": [[1, 2], [3, 4]], "y": [0, 3]})");
  expectDataError([&] { loadDataset(leafConfig(dir, 3), 0); }, {"user 'u' sample 1", "label 3", "[0, 3)"});
  EXPECT_EQ(loadDataset(leafConfig(dir, 4), 0).train.numClasses, 4);
  // Next-character prediction: the vocabulary (with <pad> and <unk>) is the set of classes.
  dir = leafDir("leaf_chars_bound", R"({"x": ["abcdef"], "y": ["a"]})");
  expectDataError([&] { loadDataset(leafConfig(dir, 7), 0); },
                  {"character vocabulary", "8 distinct classes", "data.max_classes = 7"});
  EXPECT_EQ(loadDataset(leafConfig(dir, 8), 0).train.numClasses, 8);
}

// ---------------------------------------------------------------- every dataset

TEST(LoadDatasetValues, ClassCountAboveMaxClassesIsRejected) {
  // CIFAR-10 always has 10 classes.
  const std::string dir = test::tempDir("cifar_classes");
  std::string record(3073, '\0');
  for (const char* name : {"data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5", "test_batch"})
    test::writeBytes(dir + "/" + name + ".bin", record);
  DataConfig cfg;
  cfg.dataset = DatasetKind::Cifar10;
  cfg.dir = dir;
  cfg.maxClasses = 9;
  expectDataError([&] { loadDataset(cfg, 0); }, {"dataset 'cifar10' has 10 classes, more than data.max_classes = 9"});
  cfg.maxClasses = 10;
  EXPECT_EQ(loadDataset(cfg, 0).train.numClasses, 10);
}

}  // namespace
}  // namespace fedsilo
