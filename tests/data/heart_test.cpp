// dataset = heart on the UCI files shipped in data/heart_disease: checksums, the patients kept, the
// hospitals as natural clients, both preprocessing variants, and a damaged or missing file.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/sha256.hpp"
#include "data/loader_util.hpp"
#include "data/loaders.hpp"
#include "data_test_util.hpp"
#include "support/test_support.hpp"

namespace fedsilo {
namespace {

namespace fs = std::filesystem;

const char* const kFiles[] = {"processed.cleveland.data", "processed.hungarian.data", "processed.switzerland.data",
                              "processed.va.data"};
// Patients per hospital with no value missing outside slope, ca and thal (FLamby's and the PLayer-FL
// authors' 740).
constexpr Index kKept[] = {303, 261, 46, 130};

std::string shippedDir() { return test::sourceDir() + "/data/heart_disease"; }

DataConfig heartConfig(HeartVariant variant = HeartVariant::PlayerFl, std::vector<double> split = {0.64, 0.16, 0.2}) {
  DataConfig c;
  c.dataset = DatasetKind::Heart;
  c.dir = shippedDir();
  c.split = std::move(split);
  c.heartVariant = variant;
  return c;
}

std::vector<Index> perHospital(const std::vector<std::int32_t>& ids) {
  std::vector<Index> n(kHeartHospitals, 0);
  for (std::int32_t k : ids) ++n[static_cast<std::size_t>(k)];
  return n;
}

float feature(const Dataset& ds, Index row, int column) {
  return ds.f32[static_cast<std::size_t>(row * ds.dim() + column)];
}

TEST(Sha256, KnownDigests) {
  // FIPS 180-4's examples (one block, two blocks) and the empty message.
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Heart, ShippedFilesAreTheUciOriginals) {
  // The digests data/heart_disease/README.md lists (the loader checks the same ones).
  const char* const sha[] = {"a74b7efa387bc9d108d7d0115d831fe9b414b29ae7124f331b622b4efa0427c8",
                             "d1ad108f785768cd3d7e82dc522e6f5a61eea93cccfb3a46ee8076f73fc3d796",
                             "834a405ccf5b66ab4056bb77794adc8df0b7125186454c0a1d002d33c6c3b314",
                             "e7c93d8d0d2acdadfa4c5e8de768e2191e7f618b952e29623f1f0d5949ff6b8f"};
  for (int k = 0; k < kHeartHospitals; ++k)
    EXPECT_EQ(sha256Hex(detail::readFileBytes(shippedDir() + "/" + kFiles[k])), sha[k]) << kFiles[k];
}

TEST(Heart, PlayerFlVariantKeeps740PatientsInFourHospitals) {
  const DataBundle b = loadDataset(heartConfig(), 0);
  EXPECT_EQ(b.name, "heart");
  EXPECT_EQ(b.train.size() + b.test.size(), 740);
  EXPECT_EQ(b.train.shape, (Shape{10, 1, 1}));
  EXPECT_EQ(b.train.numClasses, 5);
  EXPECT_EQ(b.numNaturalClients, kHeartHospitals);
  const std::vector<Index> train = perHospital(b.naturalClient), test = perHospital(b.naturalClientTest);
  for (int k = 0; k < kHeartHospitals; ++k) {
    EXPECT_EQ(train[k] + test[k], kKept[k]) << "hospital " << k;
    EXPECT_EQ(test[k], std::llround(0.2 * static_cast<double>(kKept[k]))) << "hospital " << k;
  }
  // The diagnoses of the 740: 357 without disease, 204, 79, 78 and 22 in grades 1-4.
  std::vector<Index> grades(5, 0);
  for (const Dataset* ds : {&b.train, &b.test})
    for (std::int32_t y : ds->labels) ++grades[static_cast<std::size_t>(y)];
  EXPECT_EQ(grades, (std::vector<Index>{357, 204, 79, 78, 22}));
}

TEST(Heart, PlayerFlScalingIsTheAuthorsFixedScaler) {
  // No test split: every patient in the training pool, in file order. Cleveland's first patient is
  // 63, 1, 1, 145, 233, 1, 2, 150, 0, 2.3 with diagnosis 0.
  const DataBundle b = loadDataset(heartConfig(HeartVariant::PlayerFl, {0.8, 0.2, 0.0}), 0);
  ASSERT_EQ(b.test.size(), 0);
  ASSERT_EQ(b.naturalClient.front(), 0);
  const double raw[] = {63, 1, 1, 145, 233, 1, 2, 150, 0, 2.3};
  const double mean[] = {53.0872973, 0, 3.23702703, 132.74405405, 220.23648649, 0, 0.64513514, 138.75459459, 0, 0.89532432};
  const double var[] = {70.1459463, 1, 0.817756772, 345.493057, 4884.30934, 1, 0.592069868, 529.172208, 1, 1.11317517};
  for (int c = 0; c < 10; ++c)
    EXPECT_NEAR(feature(b.train, 0, c), (raw[c] - mean[c]) / std::sqrt(var[c]), 1e-5) << "column " << c;
  EXPECT_EQ(b.train.labels.front(), 0);
}

TEST(Heart, HeldOutPatientsAreKeyedBySeed) {
  const DataBundle a = loadDataset(heartConfig(), 3), again = loadDataset(heartConfig(), 3);
  const DataBundle other = loadDataset(heartConfig(), 4);
  EXPECT_EQ(a.test.f32, again.test.f32);
  EXPECT_EQ(a.train.f32, again.train.f32);
  EXPECT_NE(a.test.f32, other.test.f32);
  EXPECT_EQ(perHospital(a.naturalClientTest), perHospital(other.naturalClientTest));
}

TEST(Heart, FlambyVariantOneHotBinaryAndPerHospitalScaling) {
  const DataBundle b = loadDataset(heartConfig(HeartVariant::Flamby), 0);
  EXPECT_EQ(b.train.shape, (Shape{13, 1, 1}));
  EXPECT_EQ(b.train.numClasses, 2);
  EXPECT_EQ(b.train.size() + b.test.size(), 740);
  Index sick = 0;
  for (const Dataset* ds : {&b.train, &b.test})
    for (std::int32_t y : ds->labels) sick += y;
  EXPECT_EQ(sick, 740 - 357);
  // Each hospital's training pool is standardised by its own mean and sample standard deviation: a
  // column that varies there has mean 0 and sample variance 1 in it; a constant one (every Swiss
  // cholesterol is 0) is 0. The one-hot columns (cp = 2, 3, 4, restecg = 1, 2) take at most two values.
  for (int k = 0; k < kHeartHospitals; ++k) {
    for (int c = 0; c < 13; ++c) {
      double sum = 0, sq = 0, n = 0;
      std::set<float> values;
      for (Index i = 0; i < b.train.size(); ++i) {
        if (b.naturalClient[static_cast<std::size_t>(i)] != k) continue;
        const double v = feature(b.train, i, c);
        sum += v;
        sq += v * v;
        n += 1;
        values.insert(feature(b.train, i, c));
      }
      EXPECT_NEAR(sum / n, 0.0, 1e-5) << "hospital " << k << " column " << c;
      const double variance = (sq - sum * sum / n) / (n - 1);
      EXPECT_TRUE(std::fabs(variance - 1.0) < 1e-4 || (values.size() == 1 && *values.begin() == 0.0f))
          << "hospital " << k << " column " << c << ": variance " << variance;
      if (c >= 8) {
        EXPECT_LE(values.size(), 2u) << "hospital " << k << " column " << c;
      }
    }
  }
}

TEST(Heart, DamagedOrMissingFileIsADataErrorNamingIt) {
  const std::string dir = test::tempDir("heart");
  for (const char* f : kFiles) fs::copy_file(shippedDir() + "/" + f, dir + "/" + f);
  DataConfig cfg = heartConfig();
  cfg.dir = dir;
  EXPECT_EQ(loadDataset(cfg, 0).train.size() + loadDataset(cfg, 0).test.size(), 740);  // the copies load
  // One digit changed in the Long Beach file: the checksum catches what parsing could not.
  std::string bytes = detail::readFileBytes(dir + "/processed.va.data");
  const std::size_t at = bytes.find("63");
  ASSERT_NE(at, std::string::npos);
  bytes[at] = '7';
  test::writeBytes(dir + "/processed.va.data", bytes);
  test::expectDataError([&] { loadDataset(cfg, 0); }, {"processed.va.data", "SHA-256"});
  fs::remove(dir + "/processed.va.data");
  test::expectDataError([&] { loadDataset(cfg, 0); }, {"processed.va.data"});
  cfg.dir = dir + "/absent";
  test::expectDataError([&] { loadDataset(cfg, 0); }, {"absent"});
}

}  // namespace
}  // namespace fedsilo
