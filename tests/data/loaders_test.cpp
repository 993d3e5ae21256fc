// CIFAR-10 binary, LEAF JSON, CSV, HDF5 and .npy loaders on small files written in the real formats.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <filesystem>

#include "data/json.hpp"
#include "data/loaders.hpp"
#include "data_test_util.hpp"
#include "support/test_support.hpp"

namespace fedsilo {
namespace {

using test::expectConfigError;
using test::expectDataError;
using test::h5Write;

// ---------------------------------------------------------------- CIFAR-10

std::string cifarRecords(int n, int labelBase) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    s += static_cast<char>((labelBase + i) % 10);
    for (int p = 0; p < 3072; ++p) s += static_cast<char>((p + i + labelBase) & 0xff);
  }
  return s;
}

TEST(Cifar10, LoadsBinaryBatches) {
  const std::string dir = test::tempDir("cifar");
  for (int b = 1; b <= 5; ++b) test::writeBytes(dir + "/data_batch_" + std::to_string(b) + ".bin", cifarRecords(2, b * 2));
  test::writeBytes(dir + "/test_batch.bin", cifarRecords(3, 7));
  DataConfig cfg;
  cfg.dataset = DatasetKind::Cifar10;
  cfg.dir = dir;
  const DataBundle b = loadDataset(cfg, 0);
  ASSERT_EQ(b.train.size(), 10);
  ASSERT_EQ(b.test.size(), 3);
  EXPECT_EQ(b.train.shape, (Shape{3, 32, 32}));
  EXPECT_EQ(b.train.numClasses, 10);
  // Batch 1 record 1 (label base 2, i = 1): label 3; pixel p = (p + 3) & 0xff, CHW order kept.
  EXPECT_EQ(b.train.labels[1], 3);
  EXPECT_EQ(b.train.u8[3072 + 0], 3);
  EXPECT_EQ(b.train.u8[3072 + 1024], static_cast<std::uint8_t>((1024 + 3) & 0xff));  // green plane start
  // Batch 5 record 0 (base 10): label 0.
  EXPECT_EQ(b.train.labels[8], 0);
  EXPECT_EQ(b.test.labels[2], 9);
}

TEST(Cifar10, RejectsPartialRecordAndBadLabel) {
  const std::string dir = test::tempDir("cifar_bad");
  for (int b = 1; b <= 5; ++b) test::writeBytes(dir + "/data_batch_" + std::to_string(b) + ".bin", cifarRecords(1, 0));
  test::writeBytes(dir + "/test_batch.bin", cifarRecords(2, 0).substr(0, 3073 + 100));
  DataConfig cfg;
  cfg.dataset = DatasetKind::Cifar10;
  cfg.dir = dir;
  expectDataError([&] { loadDataset(cfg, 0); }, {"test_batch.bin", "3173", "3073"});
  std::string rec = cifarRecords(1, 0);
  rec[0] = 10;
  test::writeBytes(dir + "/test_batch.bin", rec);
  expectDataError([&] { loadDataset(cfg, 0); }, {"test_batch.bin", "label 10"});
  std::filesystem::remove(dir + "/data_batch_3.bin");
  expectDataError([&] { loadDataset(cfg, 0); }, {"data_batch_3.bin"});
}

// ---------------------------------------------------------------- JSON / LEAF

TEST(Json, ParsesValuesAndPacksNumberArrays) {
  const json::Value v = json::parse(
      R"({"a": [1, -2.5e1, 0], "b": ["x\n\u00e9\ud83d\ude00", true, null], "c": {}, "d": [[1,2],[3]]})", "t");
  const json::Value* a = v.find("a");
  ASSERT_TRUE(a && a->packed);
  EXPECT_EQ(a->numbers, (std::vector<double>{1, -25, 0}));
  const json::Value* b = v.find("b");
  ASSERT_TRUE(b && !b->packed);
  EXPECT_EQ(b->items[0].string, "x\n\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(b->items[1].type, json::Value::Type::Bool);
  EXPECT_EQ(b->items[2].type, json::Value::Type::Null);
  EXPECT_EQ(v.find("d")->items[1].numbers, (std::vector<double>{3}));
}

TEST(Json, RejectsMalformedInputWithOffset) {
  struct Case {
    std::string text;
    std::size_t offset;
  };
  const std::vector<Case> cases = {
      {R"({"a": [1, 2,, 3]})", 12},  // second comma
      {R"({"a": 01})", 7},           // leading zero: '1' is unexpected after the number 0
      {R"({"a": "x)", 8},            // unterminated string (reported at end of input)
      {R"({"a": tru})", 6},
      {R"({"a": 1} x)", 9},
      {R"({"a" 1})", 5},
      {R"(["\q"])", 3},
  };
  for (const auto& c : cases) {
    expectDataError([&] { json::parse(c.text, "f.json"); }, {"f.json", "byte " + std::to_string(c.offset)});
  }
  EXPECT_THROW(json::parse(std::string(1000, '['), "deep"), DataError);
}

std::string leafDoc(const std::string& users, const std::string& numSamples, const std::string& userData) {
  return R"({"users": )" + users + R"(, "num_samples": )" + numSamples + R"(, "user_data": )" + userData + "}";
}

std::string makeLeafDir(const std::string& tag) {
  const std::string dir = test::tempDir(tag);
  std::filesystem::create_directories(dir + "/train");
  std::filesystem::create_directories(dir + "/test");
  return dir;
}

TEST(Leaf, NumericFeaturesAndNaturalClients) {
  const std::string dir = makeLeafDir("leaf_num");
  test::writeBytes(dir + "/train/a.json",
                   leafDoc(R"(["u1", "u2"])", "[2, 1]",
                           R"({"u1": {"x": [[0.5, 0.25, 1], [1, 2, 3]], "y": [0, 2]}, "u2": {"x": [[4, 5, 6]], "y": [1]}})"));
  test::writeBytes(dir + "/train/b.json", leafDoc(R"(["u3"])", "[1]", R"({"u3": {"x": [[7, 8, 9]], "y": [0]}})"));
  test::writeBytes(dir + "/test/a.json",
                   leafDoc(R"(["u2", "u3"])", "[1, 1]",
                           R"({"u2": {"x": [[-1, -2, -3]], "y": [3]}, "u3": {"x": [[9, 9, 9]], "y": [0]}})"));
  DataConfig cfg;
  cfg.dataset = DatasetKind::Leaf;
  cfg.dir = dir;
  const DataBundle b = loadDataset(cfg, 0);
  ASSERT_EQ(b.train.size(), 4);
  ASSERT_EQ(b.test.size(), 2);
  EXPECT_EQ(b.train.shape, (Shape{3, 1, 1}));
  EXPECT_EQ(b.train.f32, (std::vector<float>{0.5f, 0.25f, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(b.train.labels, (std::vector<std::int32_t>{0, 2, 1, 0}));
  EXPECT_EQ(b.test.labels, (std::vector<std::int32_t>{3, 0}));
  EXPECT_EQ(b.train.numClasses, 4);
  EXPECT_EQ(b.numNaturalClients, 3);
  EXPECT_EQ(b.naturalClient, (std::vector<std::int32_t>{0, 0, 1, 2}));
  EXPECT_EQ(b.naturalClientTest, (std::vector<std::int32_t>{1, 2}));
  EXPECT_TRUE(b.vocabulary.empty());
  EXPECT_EQ(b.vocabSize, 0);
}

TEST(Leaf, FemnistSizedVectorsBecomeImages) {
  const std::string dir = makeLeafDir("leaf_784");
  std::string x = "[";
  for (int i = 0; i < 784; ++i) x += (i ? "," : "") + std::to_string(i % 2);
  x += "]";
  test::writeBytes(dir + "/train/t.json", leafDoc(R"(["w"])", "[1]", R"({"w": {"x": [)" + x + R"(], "y": [61]}})"));
  test::writeBytes(dir + "/test/t.json", leafDoc("[]", "[]", "{}"));
  DataConfig cfg;
  cfg.dataset = DatasetKind::Leaf;
  cfg.dir = dir;
  const DataBundle b = loadDataset(cfg, 0);
  EXPECT_EQ(b.train.shape, (Shape{1, 28, 28}));
  EXPECT_EQ(b.train.numClasses, 62);
  EXPECT_EQ(b.train.f32[1], 1.0f);
}

TEST(Leaf, WordTokensFromTrainVocabulary) {
  const std::string dir = makeLeafDir("leaf_words");
  // Sent140 records: [id, date, query, user, text]; the text is the last field.
  test::writeBytes(dir + "/train/s.json",
                   leafDoc(R"(["a", "b"])", "[2, 1]",
                           R"({"a": {"x": [["1", "d", "NO_QUERY", "a", "Hello World hello"], ["2", "d", "q", "a", "good"]], "y": [1, 0]},
                               "b": {"x": [["3", "d", "q", "b", "one two three four five HELLO"]], "y": [1]}})"));
  test::writeBytes(dir + "/test/s.json",
                   leafDoc(R"(["b"])", "[1]", R"({"b": {"x": [["4", "d", "q", "b", "hello unseen"]], "y": [0]}})"));
  DataConfig cfg;
  cfg.dataset = DatasetKind::Leaf;
  cfg.dir = dir;
  cfg.seqLength = 4;
  const DataBundle b = loadDataset(cfg, 0);
  // Frequencies: hello 3, then the rest once each in byte order.
  const std::vector<std::string> vocab = {"<pad>", "<unk>", "hello", "five", "four", "good", "one", "three", "two", "world"};
  EXPECT_EQ(b.vocabulary, vocab);
  EXPECT_EQ(b.vocabSize, 10);
  EXPECT_EQ(b.train.shape, (Shape{1, 1, 4}));
  EXPECT_EQ(b.train.numClasses, 2);
  // Right-aligned (left-padded); long word sequences keep their first seqLength words.
  EXPECT_EQ(b.train.f32, (std::vector<float>{0, 2, 9, 2, /**/ 0, 0, 0, 5, /**/ 6, 8, 7, 4}));
  EXPECT_EQ(b.test.f32, (std::vector<float>{0, 0, 2, 1}));  // "unseen" -> <unk>
  EXPECT_EQ(b.train.labels, (std::vector<std::int32_t>{1, 0, 1}));
  EXPECT_EQ(b.naturalClientTest, (std::vector<std::int32_t>{1}));
}

TEST(Leaf, CharacterTokensAndStringLabels) {
  const std::string dir = makeLeafDir("leaf_chars");
  test::writeBytes(dir + "/train/s.json",
                   leafDoc(R"(["p"])", "[2]", R"({"p": {"x": ["abcab", "ba"], "y": ["c", "b"]}})"));
  test::writeBytes(dir + "/test/s.json", leafDoc(R"(["p"])", "[1]", R"({"p": {"x": ["zab"], "y": ["z"]}})"));
  DataConfig cfg;
  cfg.dataset = DatasetKind::Leaf;
  cfg.dir = dir;
  cfg.seqLength = 3;
  const DataBundle b = loadDataset(cfg, 0);
  // Train counts (x and y): a 3, b 4, c 2.
  EXPECT_EQ(b.vocabulary, (std::vector<std::string>{"<pad>", "<unk>", "b", "a", "c"}));
  EXPECT_EQ(b.vocabSize, 5);
  EXPECT_EQ(b.train.numClasses, 5);
  // "abcab" keeps its last 3 characters "cab"; "ba" is left-padded.
  EXPECT_EQ(b.train.f32, (std::vector<float>{4, 3, 2, 0, 2, 3}));
  EXPECT_EQ(b.train.labels, (std::vector<std::int32_t>{4, 2}));
  EXPECT_EQ(b.test.f32, (std::vector<float>{1, 3, 2}));
  EXPECT_EQ(b.test.labels, (std::vector<std::int32_t>{1}));
}

TEST(Leaf, RejectsMalformedAndInconsistentFiles) {
  const std::string dir = makeLeafDir("leaf_bad");
  DataConfig cfg;
  cfg.dataset = DatasetKind::Leaf;
  cfg.dir = dir;
  test::writeBytes(dir + "/test/t.json", leafDoc("[]", "[]", "{}"));
  const std::string good = leafDoc(R"(["u"])", "[1]", R"({"u": {"x": [[1, 2]], "y": [0]}})");
  test::writeBytes(dir + "/train/t.json", good.substr(0, good.size() - 5));  // cut off
  expectDataError([&] { loadDataset(cfg, 0); }, {"train/t.json", "malformed JSON at byte"});
  test::writeBytes(dir + "/train/t.json", leafDoc(R"(["u"])", "[2]", R"({"u": {"x": [[1, 2]], "y": [0]}})"));
  expectDataError([&] { loadDataset(cfg, 0); }, {"train/t.json", "num_samples"});
  test::writeBytes(dir + "/train/t.json", leafDoc(R"(["u"])", "[1]", R"({"u": {"x": [[1, 2]], "y": [0, 1]}})"));
  expectDataError([&] { loadDataset(cfg, 0); }, {"train/t.json", "1 samples", "2 labels"});
  test::writeBytes(dir + "/train/t.json", leafDoc(R"(["u", "v"])", "[1, 1]", R"({"u": {"x": [[1, 2]], "y": [0]}})"));
  expectDataError([&] { loadDataset(cfg, 0); }, {"train/t.json", "\"v\""});
  test::writeBytes(dir + "/train/t.json", leafDoc(R"(["u"])", "[2]", R"({"u": {"x": [[1, 2], [3]], "y": [0, 1]}})"));
  expectDataError([&] { loadDataset(cfg, 0); }, {"train/t.json", "sample 1"});
  test::writeBytes(dir + "/train/t.json", leafDoc(R"(["u"])", "[1]", R"({"u": {"x": [[1, 2]], "y": [0.5]}})"));
  expectDataError([&] { loadDataset(cfg, 0); }, {"train/t.json", "0.5"});
  test::writeBytes(dir + "/train/t.json", good);
  test::writeBytes(dir + "/test/t.json", leafDoc(R"(["stranger"])", "[1]", R"({"stranger": {"x": [[1, 2]], "y": [0]}})"));
  expectDataError([&] { loadDataset(cfg, 0); }, {"test/t.json", "stranger"});
  std::filesystem::remove_all(dir + "/test");
  expectDataError([&] { loadDataset(cfg, 0); }, {dir + "/test"});
}

// ---------------------------------------------------------------- CSV

DataConfig csvConfig(const std::string& file) {
  DataConfig cfg;
  cfg.dataset = DatasetKind::Csv;
  cfg.file = file;
  return cfg;
}

TEST(Csv, LoadsHoldsOutAndStandardises) {
  const std::string dir = test::tempDir("csv");
  const std::string p = dir + "/d.csv";
  // f2 = 2 * f1 exactly, so after per-column standardisation both columns must agree.
  std::string text = "f1,label,\"f 2\",site\r\n";
  for (int i = 0; i < 10; ++i)
    text += std::to_string(i) + "," + (i % 3 == 0 ? "cat" : "dog") + "," + std::to_string(2 * i) + "," +
            (i < 5 ? "\"B\"" : "A") + "\r\n";
  text += "\n";  // blank trailing line is ignored
  test::writeBytes(p, text);
  DataConfig cfg = csvConfig(p);
  cfg.clientColumn = "site";
  const DataBundle b = loadDataset(cfg, 42);
  ASSERT_EQ(b.train.size(), 8);
  ASSERT_EQ(b.test.size(), 2);
  EXPECT_EQ(b.train.shape, (Shape{2, 1, 1}));
  EXPECT_EQ(b.train.numClasses, 2);
  EXPECT_EQ(b.numNaturalClients, 2);
  double mean = 0, sq = 0;
  for (Index i = 0; i < 8; ++i) {
    const float z1 = b.train.f32[static_cast<std::size_t>(2 * i)], z2 = b.train.f32[static_cast<std::size_t>(2 * i + 1)];
    EXPECT_NEAR(z1, z2, 1e-5);
    mean += z1;
    sq += double(z1) * z1;
  }
  EXPECT_NEAR(mean / 8, 0.0, 1e-6);
  EXPECT_NEAR(sq / 8, 1.0, 1e-5);
  for (Index i = 0; i < 2; ++i)
    EXPECT_NEAR(b.test.f32[static_cast<std::size_t>(2 * i)], b.test.f32[static_cast<std::size_t>(2 * i + 1)], 1e-5);
  // Find which two rows were held out: exactly one pair {t1, t2} makes the train values the z-scores
  // of the remaining eight f1 values under their own mean / population std, and the test values the
  // z-scores of t1, t2 under those same TRAIN statistics. Labels and clients must follow their rows.
  int matches = 0;
  for (int t1 = 0; t1 < 10; ++t1)
    for (int t2 = t1 + 1; t2 < 10; ++t2) {
      std::vector<int> rows;
      for (int i = 0; i < 10; ++i)
        if (i != t1 && i != t2) rows.push_back(i);
      double mu = 0, var = 0;
      for (int r : rows) mu += r;
      mu /= 8;
      for (int r : rows) var += (r - mu) * (r - mu);
      const double sd = std::sqrt(var / 8);
      bool ok = true;
      for (int j = 0; j < 8; ++j) ok = ok && std::fabs(b.train.f32[static_cast<std::size_t>(2 * j)] - (rows[j] - mu) / sd) < 1e-5;
      const int tr[2] = {t1, t2};
      for (int j = 0; j < 2; ++j) ok = ok && std::fabs(b.test.f32[static_cast<std::size_t>(2 * j)] - (tr[j] - mu) / sd) < 1e-5;
      if (!ok) continue;
      ++matches;
      for (int j = 0; j < 8; ++j) {
        EXPECT_EQ(b.train.labels[static_cast<std::size_t>(j)], rows[j] % 3 == 0 ? 0 : 1);  // cat < dog
        EXPECT_EQ(b.naturalClient[static_cast<std::size_t>(j)], rows[j] < 5 ? 1 : 0);      // "A" < "B"
      }
      for (int j = 0; j < 2; ++j) {
        EXPECT_EQ(b.test.labels[static_cast<std::size_t>(j)], tr[j] % 3 == 0 ? 0 : 1);
        EXPECT_EQ(b.naturalClientTest[static_cast<std::size_t>(j)], tr[j] < 5 ? 1 : 0);
      }
    }
  EXPECT_EQ(matches, 1);
  // Same seed -> same hold-out; another seed -> (almost surely) another.
  const DataBundle again = loadDataset(cfg, 42);
  EXPECT_EQ(again.test.f32, b.test.f32);
}

TEST(Csv, IntegerLabelsAreClassIds) {
  const std::string dir = test::tempDir("csv_int");
  const std::string p = dir + "/d.csv";
  test::writeBytes(p, "x,label\n1,0\n2,2\n3,1\n4,2\n5,0\n");
  const DataBundle b = loadDataset(csvConfig(p), 0);
  EXPECT_EQ(b.train.numClasses, 3);
  std::vector<int> seen(3, 0);
  for (auto y : b.train.labels) ++seen[static_cast<std::size_t>(y)];
  for (auto y : b.test.labels) ++seen[static_cast<std::size_t>(y)];
  EXPECT_EQ(seen, (std::vector<int>{2, 1, 2}));
  EXPECT_TRUE(b.naturalClient.empty());
}

TEST(Csv, RejectsBadInput) {
  const std::string dir = test::tempDir("csv_bad");
  const std::string p = dir + "/d.csv";
  test::writeBytes(p, "a,b,label\n1,2,0\n3,4\n");
  expectDataError([&] { loadDataset(csvConfig(p), 0); }, {"d.csv", "line 3", "2 fields", "3"});
  test::writeBytes(p, "a,b,label\n1,2,0\n3,x4,1\n");
  expectDataError([&] { loadDataset(csvConfig(p), 0); }, {"d.csv", "line 3", "column 'b'", "x4"});
  test::writeBytes(p, "a,b,target\n1,2,0\n");
  expectDataError([&] { loadDataset(csvConfig(p), 0); }, {"d.csv", "label column 'label'", "target"});
  test::writeBytes(p, "a,label\n\"1,0\n");
  expectDataError([&] { loadDataset(csvConfig(p), 0); }, {"d.csv", "unterminated"});
  test::writeBytes(p, "");
  expectDataError([&] { loadDataset(csvConfig(p), 0); }, {"d.csv", "empty"});
  DataConfig cfg = csvConfig(p);
  test::writeBytes(p, "a,label\n1,0\n");
  cfg.clientColumn = "hospital";
  expectDataError([&] { loadDataset(cfg, 0); }, {"d.csv", "hospital"});
  expectDataError([&] { loadDataset(csvConfig(dir + "/nope.csv"), 0); }, {"nope.csv"});
}

// ---------------------------------------------------------------- HDF5

DataConfig h5Config(const std::string& file) {
  DataConfig cfg;
  cfg.dataset = DatasetKind::Hdf5;
  cfg.file = file;
  return cfg;
}

TEST(Hdf5, FloatFeaturesWithClientAndHoldOut) {
  const std::string p = test::tempDir("h5") + "/d.h5";
  const hid_t f = H5Fcreate(p.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  std::vector<double> X(10 * 3);
  for (int i = 0; i < 30; ++i) X[static_cast<std::size_t>(i)] = i * 0.5;
  std::vector<std::int16_t> y = {0, 1, 2, 0, 1, 2, 0, 1, 2, 3};
  std::vector<std::int32_t> client = {7, 7, 7, 9, 9, 9, 7, 9, 7, 9};
  h5Write(f, "X", H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, {10, 3}, X.data());
  h5Write(f, "y", H5T_NATIVE_INT16, H5T_STD_I16LE, {10}, y.data());
  h5Write(f, "client", H5T_NATIVE_INT32, H5T_STD_I32LE, {10}, client.data());
  H5Fclose(f);
  const DataBundle b = loadDataset(h5Config(p), 3);
  ASSERT_EQ(b.train.size(), 8);
  ASSERT_EQ(b.test.size(), 2);
  EXPECT_EQ(b.train.shape, (Shape{3, 1, 1}));
  EXPECT_EQ(b.train.numClasses, 4);
  EXPECT_EQ(b.numNaturalClients, 2);
  // Every row is reproduced unchanged (x[i][0] = 1.5 i identifies the row) with its label and client.
  for (const auto& [ds, nat] : {std::pair{&b.train, &b.naturalClient}, std::pair{&b.test, &b.naturalClientTest}}) {
    ASSERT_EQ(nat->size(), static_cast<std::size_t>(ds->size()));
    for (Index j = 0; j < ds->size(); ++j) {
      const int row = static_cast<int>(std::lround(ds->f32[static_cast<std::size_t>(3 * j)] / 1.5));
      EXPECT_FLOAT_EQ(ds->f32[static_cast<std::size_t>(3 * j + 2)], static_cast<float>((3 * row + 2) * 0.5));
      EXPECT_EQ(ds->labels[static_cast<std::size_t>(j)], y[static_cast<std::size_t>(row)]);
      EXPECT_EQ((*nat)[static_cast<std::size_t>(j)], client[static_cast<std::size_t>(row)] == 7 ? 0 : 1);
    }
  }
}

TEST(Hdf5, Uint8ImagesWithExplicitTestSet) {
  const std::string p = test::tempDir("h5img") + "/d.h5";
  const hid_t f = H5Fcreate(p.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  std::vector<std::uint8_t> X(4 * 2 * 3 * 3), Xt(1 * 2 * 3 * 3, 255);
  for (std::size_t i = 0; i < X.size(); ++i) X[i] = static_cast<std::uint8_t>(i);
  std::vector<std::int64_t> y = {1, 0, 1, 0}, yt = {1};
  h5Write(f, "X", H5T_NATIVE_UCHAR, H5T_STD_U8LE, {4, 2, 3, 3}, X.data());
  h5Write(f, "y", H5T_NATIVE_INT64, H5T_STD_I64LE, {4}, y.data());
  h5Write(f, "X_test", H5T_NATIVE_UCHAR, H5T_STD_U8LE, {1, 2, 3, 3}, Xt.data());
  h5Write(f, "y_test", H5T_NATIVE_INT64, H5T_STD_I64LE, {1}, yt.data());
  H5Fclose(f);
  const DataBundle b = loadDataset(h5Config(p), 0);
  EXPECT_EQ(b.train.size(), 4);
  EXPECT_EQ(b.test.size(), 1);
  EXPECT_EQ(b.train.shape, (Shape{2, 3, 3}));
  EXPECT_TRUE(b.train.isU8());
  EXPECT_EQ(b.train.u8, X);
  const Index idx[] = {0};
  float out[18];
  b.test.gather(idx, 1, out);
  EXPECT_FLOAT_EQ(out[17], 1.0f);
  EXPECT_EQ(b.train.numClasses, 2);
}

TEST(Hdf5, RejectsBadFiles) {
  const std::string dir = test::tempDir("h5bad");
  const std::string p = dir + "/d.h5";
  auto make = [&](bool withY, hsize_t yLen, bool intX) {
    const hid_t f = H5Fcreate(p.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    std::vector<std::int32_t> X(6, 1), y(yLen, 0);
    if (intX)
      h5Write(f, "X", H5T_NATIVE_INT32, H5T_STD_I32LE, {3, 2}, X.data());
    else
      h5Write(f, "X", H5T_NATIVE_INT32, H5T_IEEE_F32LE, {3, 2}, X.data());
    if (withY) h5Write(f, "y", H5T_NATIVE_INT32, H5T_STD_I32LE, {yLen}, y.data());
    H5Fclose(f);
  };
  make(false, 3, false);
  expectDataError([&] { loadDataset(h5Config(p), 0); }, {"d.h5", "'y'"});
  make(true, 2, false);
  expectDataError([&] { loadDataset(h5Config(p), 0); }, {"d.h5", "'y'", "3 values"});
  make(true, 3, true);
  expectDataError([&] { loadDataset(h5Config(p), 0); }, {"d.h5", "'X'", "floats or uint8"});
  make(true, 3, false);
  EXPECT_EQ(loadDataset(h5Config(p), 0).train.size() + loadDataset(h5Config(p), 0).test.size(), 3);
  // Truncated file.
  std::ifstream in(p, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  test::writeBytes(dir + "/cut.h5", bytes.substr(0, bytes.size() / 2));
  expectDataError([&] { loadDataset(h5Config(dir + "/cut.h5"), 0); }, {"cut.h5"});
  test::writeBytes(dir + "/text.h5", "this is not hdf5\n");
  expectDataError([&] { loadDataset(h5Config(dir + "/text.h5"), 0); }, {"text.h5", "not an HDF5 file"});
  expectDataError([&] { loadDataset(h5Config(dir + "/missing.h5"), 0); }, {"missing.h5"});
}

// ---------------------------------------------------------------- .npy

TEST(Npy, ReadsIntegerDtypes) {
  const std::string dir = test::tempDir("npy");
  test::writeBytes(dir + "/i4.npy", test::npyBytes("<i4", 3, test::rawLe<std::int32_t>({5, -1, 70000})));
  EXPECT_EQ(readNpyInts(dir + "/i4.npy"), (std::vector<std::int64_t>{5, -1, 70000}));
  test::writeBytes(dir + "/u1.npy", test::npyBytes("|u1", 2, test::rawLe<std::uint8_t>({255, 3})));
  EXPECT_EQ(readNpyInts(dir + "/u1.npy"), (std::vector<std::int64_t>{255, 3}));
  test::writeBytes(dir + "/i1.npy", test::npyBytes("|i1", 2, test::rawLe<std::int8_t>({-128, 3})));
  EXPECT_EQ(readNpyInts(dir + "/i1.npy"), (std::vector<std::int64_t>{-128, 3}));
  test::writeBytes(dir + "/i8.npy", test::npyBytes("<i8", 1, test::rawLe<std::int64_t>({-(1LL << 40)}), 2));
  EXPECT_EQ(readNpyInts(dir + "/i8.npy"), (std::vector<std::int64_t>{-(1LL << 40)}));
  test::writeBytes(dir + "/u2.npy", test::npyBytes("<u2", 1, test::rawLe<std::uint16_t>({65535})));
  EXPECT_EQ(readNpyInts(dir + "/u2.npy"), (std::vector<std::int64_t>{65535}));
  test::writeBytes(dir + "/u4.npy", test::npyBytes("<u4", 1, test::rawLe<std::uint32_t>({4000000000u})));
  EXPECT_EQ(readNpyInts(dir + "/u4.npy"), (std::vector<std::int64_t>{4000000000LL}));
  test::writeBytes(dir + "/i2.npy", test::npyBytes("<i2", 0, ""));
  EXPECT_TRUE(readNpyInts(dir + "/i2.npy").empty());
}

TEST(Npy, RejectsUnsupportedOrBrokenFiles) {
  const std::string dir = test::tempDir("npy_bad");
  const std::string raw = test::rawLe<std::int32_t>({1, 2});
  test::writeBytes(dir + "/f8.npy", test::npyBytes("<f8", 1, std::string(8, '\0')));
  expectDataError([&] { readNpyInts(dir + "/f8.npy"); }, {"f8.npy", "<f8"});
  test::writeBytes(dir + "/be.npy", test::npyBytes(">i4", 2, raw));
  expectDataError([&] { readNpyInts(dir + "/be.npy"); }, {"be.npy", ">i4"});
  test::writeBytes(dir + "/2d.npy", test::npyBytes("<i4", 2, raw, 1, "1, 2"));
  expectDataError([&] { readNpyInts(dir + "/2d.npy"); }, {"2d.npy", "1-D"});
  std::string fortran = test::npyBytes("<i4", 2, raw);
  fortran.replace(fortran.find("False"), 5, "True ");
  test::writeBytes(dir + "/fo.npy", fortran);
  expectDataError([&] { readNpyInts(dir + "/fo.npy"); }, {"fo.npy", "fortran"});
  const std::string good = test::npyBytes("<i4", 2, raw);
  test::writeBytes(dir + "/short.npy", good.substr(0, good.size() - 1));
  expectDataError([&] { readNpyInts(dir + "/short.npy"); }, {"short.npy", "exactly"});
  test::writeBytes(dir + "/long.npy", good + "x");
  expectDataError([&] { readNpyInts(dir + "/long.npy"); }, {"long.npy", "exactly"});
  test::writeBytes(dir + "/magic.npy", "PK\x03\x04 not numpy at all");
  expectDataError([&] { readNpyInts(dir + "/magic.npy"); }, {"magic.npy", "magic"});
  std::string badHeader = good;
  badHeader.replace(badHeader.find("'shape'"), 7, "'shope'");
  test::writeBytes(dir + "/hdr.npy", badHeader);
  expectDataError([&] { readNpyInts(dir + "/hdr.npy"); }, {"hdr.npy", "shope"});
}

}  // namespace
}  // namespace fedsilo
