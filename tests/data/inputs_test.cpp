// Input protocol: data.normalize (gather arithmetic, statistics, FashionMNIST's known values),
// data.limit, and the image augmentation's geometry (data.augment = affine).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/error.hpp"
#include "data/augment.hpp"
#include "data/loaders.hpp"
#include "data/normalize.hpp"

namespace fedsilo::test {
namespace {

// A u8 dataset of n samples, 2 channels x 2 x 3 pixels: value (7 i + 3 f) mod 256.
Dataset smallU8(int n) {
  Dataset ds;
  ds.shape = Shape{2, 2, 3};
  ds.numClasses = 2;
  for (int i = 0; i < n; ++i) {
    for (int f = 0; f < 12; ++f) ds.u8.push_back(static_cast<std::uint8_t>((7 * i + 3 * f) % 256));
    ds.labels.push_back(i % 2);
  }
  return ds;
}

TEST(Normalize, GatherScalesEachChannel) {
  Dataset ds = smallU8(4);
  ds.setNormalization({0.25, 0.5}, {0.5, 0.125});
  const Index idx[] = {3, 1};
  std::vector<float> x(24);
  std::vector<double> xd(24);
  ds.gather(idx, 2, x.data());
  ds.gather(idx, 2, xd.data());
  for (int j = 0; j < 2; ++j)
    for (int f = 0; f < 12; ++f) {
      const double raw = ((7 * idx[j] + 3 * f) % 256) / 255.0;
      const double want = f < 6 ? (raw - 0.25) / 0.5 : (raw - 0.5) / 0.125;
      EXPECT_NEAR(x[static_cast<std::size_t>(j * 12 + f)], want, 1e-6) << j << " " << f;
      EXPECT_NEAR(xd[static_cast<std::size_t>(j * 12 + f)], want, 1e-6) << j << " " << f;
    }
  EXPECT_FLOAT_EQ(ds.zeroValue(1), -4.0f);
}

TEST(Normalize, StatisticsOfTheGivenListsOnly) {
  const Dataset ds = smallU8(10);
  const IndexList a{0, 2, 4}, b{7};
  const ChannelStats s = channelStats(ds, {&a, &b});
  for (int c = 0; c < 2; ++c) {
    double sum = 0, sumSq = 0, n = 0;
    for (Index i : {0, 2, 4, 7})
      for (int f = c * 6; f < c * 6 + 6; ++f) {
        const double v = ((7 * i + 3 * f) % 256) / 255.0;
        sum += v;
        sumSq += v * v;
        ++n;
      }
    const double mean = sum / n;
    // (u8Scale is the float nearest 1/255: relative error 6e-8)
    EXPECT_NEAR(s.mean[static_cast<std::size_t>(c)], mean, 1e-7 * mean);
    EXPECT_NEAR(s.std[static_cast<std::size_t>(c)], std::sqrt(sumSq / n - mean * mean), 1e-7 * mean);
  }
}

TEST(Normalize, FloatDataAndConstantFeatures) {
  Dataset ds;
  ds.shape = Shape{2, 1, 1};  // tabular: one channel per feature
  ds.numClasses = 2;
  ds.f32 = {1, 5, 3, 5, 5, 5};
  ds.labels = {0, 1, 0};
  const IndexList all{0, 1, 2};
  const ChannelStats s = channelStats(ds, {&all});
  EXPECT_DOUBLE_EQ(s.mean[0], 3.0);
  EXPECT_DOUBLE_EQ(s.std[0], std::sqrt(8.0 / 3.0));
  EXPECT_DOUBLE_EQ(s.mean[1], 5.0);
  EXPECT_DOUBLE_EQ(s.std[1], 1.0);  // zero variance: centred only
}

TEST(Normalize, RefusesTokensAndListsOfTheWrongLength) {
  DataBundle b;
  b.name = "x";
  b.train = smallU8(3);
  b.test = smallU8(2);
  DataConfig cfg;
  cfg.normalize = NormalizeKind::MeanStd;
  cfg.mean = {0.1, 0.2, 0.3};
  cfg.std = {1, 1, 1};
  const IndexList all{0, 1, 2};
  try {
    normalizeInputs(b, cfg, {&all});
    FAIL() << "3 means for 2 channels accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("data.mean: 3 values given, expected 1 or one per channel (2"),
              std::string::npos)
        << e.what();
  }
  cfg.mean = {0.5};
  cfg.std = {0.25};
  normalizeInputs(b, cfg, {&all});  // one value: every channel
  EXPECT_EQ(b.test.channelMean, (std::vector<float>{0.5f, 0.5f}));
  b.vocabSize = 10;
  EXPECT_THROW(normalizeInputs(b, cfg, {&all}), ConfigError);
}

// The widely quoted FashionMNIST training-set statistics (the PLayer-FL authors' Normalize((0.2860,),
// (0.3530,)), for example), from the data's own 60,000 training images.
TEST(Normalize, FashionMnistTrainingStatistics) {
  DataConfig cfg;
  const DataBundle b = loadDataset(cfg, 0);
  IndexList all(static_cast<std::size_t>(b.train.size()));
  for (Index i = 0; i < b.train.size(); ++i) all[static_cast<std::size_t>(i)] = i;
  const ChannelStats s = channelStats(b.train, {&all});
  EXPECT_NEAR(s.mean[0], 0.2860, 5e-5);
  EXPECT_NEAR(s.std[0], 0.3530, 5e-5);
}

TEST(DataLimit, KeepsTheFirstTrainingSamples) {
  DataConfig cfg;
  const DataBundle full = loadDataset(cfg, 0);
  cfg.limit = 1000;
  const DataBundle cut = loadDataset(cfg, 0);
  ASSERT_EQ(cut.train.size(), 1000);
  EXPECT_EQ(cut.test.size(), full.test.size());
  EXPECT_TRUE(std::equal(cut.train.labels.begin(), cut.train.labels.end(), full.train.labels.begin()));
  EXPECT_TRUE(std::equal(cut.train.u8.begin(), cut.train.u8.end(), full.train.u8.begin()));
  cfg.limit = 60001;
  try {
    loadDataset(cfg, 0);
    FAIL() << "a limit above the training set accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("data.limit = 60001: dataset 'fashion_mnist' has only 60000"),
              std::string::npos)
        << e.what();
  }
}

// ---- augmentation ------------------------------------------------------------------------------
const Shape kImage{1, 5, 7};

std::vector<float> ramp() {
  std::vector<float> v(35);
  for (int i = 0; i < 35; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
  return v;
}

float at(const std::vector<float>& img, int x, int y) {
  return x < 0 || x >= 7 || y < 0 || y >= 5 ? 0.0f : img[static_cast<std::size_t>(y * 7 + x)];
}

AugmentSettings none() {
  AugmentSettings s;
  s.rotation = 0;
  s.translate = 0;
  return s;
}

// Augments ramp() with a map drawn from key `k`.
std::vector<float> augmented(const AugmentSettings& s, std::uint64_t k, AffineMap* map = nullptr) {
  Augmenter a(s, kImage, {0.0f}, "test");
  Rng rng(1, 2, 3, Purpose::Augment, k);
  const AffineMap m = a.draw(rng);
  if (map) *map = m;
  std::vector<float> img = ramp();
  a.apply(m, img.data());
  return img;
}

TEST(Augment, NothingEnabledIsTheIdentity) {
  for (std::uint64_t k = 0; k < 20; ++k) EXPECT_EQ(augmented(none(), k), ramp());
}

TEST(Augment, FlipMirrorsRowsOrLeavesTheImage) {
  AugmentSettings s = none();
  s.flip = true;
  int flipped = 0;
  for (std::uint64_t k = 0; k < 40; ++k) {
    const std::vector<float> out = augmented(s, k), in = ramp();
    if (out == in) continue;
    ++flipped;
    for (int y = 0; y < 5; ++y)
      for (int x = 0; x < 7; ++x) EXPECT_EQ(at(out, x, y), at(in, 6 - x, y));
  }
  EXPECT_GT(flipped, 10);
  EXPECT_LT(flipped, 30);
}

// Crop with padding P and whole-pixel translation are shifts by integers within their ranges, zero filled.
TEST(Augment, CropAndTranslationAreIntegerShifts) {
  for (int mode = 0; mode < 2; ++mode) {
    AugmentSettings s = none();
    int limitX = 2, limitY = 2;
    if (mode == 0) {
      s.cropPadding = 2;
    } else {
      s.translate = 0.3;  // |shift| <= round(0.3 * 7) = 2 and round(0.3 * 5) = 2 (1.5 rounds to 2)
    }
    std::set<std::pair<int, int>> seen;
    for (std::uint64_t k = 0; k < 60; ++k) {
      AffineMap m;
      const std::vector<float> out = augmented(s, k, &m);
      const int dx = static_cast<int>(m.c), dy = static_cast<int>(m.f);
      ASSERT_EQ(m.c, dx);
      ASSERT_EQ(m.f, dy);
      ASSERT_LE(std::abs(dx), limitX);
      ASSERT_LE(std::abs(dy), limitY);
      seen.insert({dx, dy});
      for (int y = 0; y < 5; ++y)
        for (int x = 0; x < 7; ++x) EXPECT_EQ(at(out, x, y), at(ramp(), x + dx, y + dy));
    }
    EXPECT_GT(seen.size(), 8u) << "mode " << mode;
  }
}

TEST(Augment, RotationAndScaleActAboutTheCentre) {
  AugmentSettings s = none();
  s.rotation = 30;
  s.scaleMin = 0.8;
  s.scaleMax = 1.25;
  const double cx = 3, cy = 2, pi = std::acos(-1.0);
  for (std::uint64_t k = 0; k < 30; ++k) {
    AffineMap m;
    const std::vector<float> out = augmented(s, k, &m);
    EXPECT_NEAR(m.a * cx + m.b * cy + m.c, cx, 1e-12);  // the centre stays
    EXPECT_NEAR(m.d * cx + m.e * cy + m.f, cy, 1e-12);
    const double inverseScale = std::hypot(m.a, m.d), angle = std::atan2(m.d, m.a) * 180 / pi;
    EXPECT_NEAR(std::hypot(m.b, m.e), inverseScale, 1e-12);  // a rotation times a scale
    EXPECT_GE(1 / inverseScale, 0.8 - 1e-12);
    EXPECT_LE(1 / inverseScale, 1.25 + 1e-12);
    EXPECT_LE(std::fabs(angle), 30 + 1e-9);
    EXPECT_EQ(at(out, 3, 2), at(ramp(), 3, 2));  // the centre pixel maps onto itself
  }
}

TEST(Augment, ApplyResamplesNearestWithTheFill) {
  // A quarter turn about the centre of a 5 x 5 image: source (x, y) = (y, 4 - x), and a shift that
  // moves part of the image out: those pixels get the channel's fill.
  Augmenter a(none(), Shape{2, 5, 5}, {-1.0f, -2.0f}, "test");
  std::vector<float> img(50);
  for (int i = 0; i < 50; ++i) img[static_cast<std::size_t>(i)] = static_cast<float>(i);
  std::vector<float> turned = img;
  a.apply(AffineMap{0, 1, 0, -1, 0, 4}, turned.data());
  for (int c = 0; c < 2; ++c)
    for (int y = 0; y < 5; ++y)
      for (int x = 0; x < 5; ++x)
        EXPECT_EQ(turned[static_cast<std::size_t>(c * 25 + y * 5 + x)],
                  img[static_cast<std::size_t>(c * 25 + (4 - x) * 5 + y)]);
  std::vector<float> shifted = img;
  a.apply(AffineMap{1, 0, 3, 0, 1, 0}, shifted.data());
  EXPECT_EQ(shifted[0], 3.0f);
  EXPECT_EQ(shifted[2], -1.0f);
  EXPECT_EQ(shifted[25 + 4], -2.0f);
}

TEST(Augment, SameKeySameMapAndImagesOnly) {
  AugmentSettings s;
  s.rotation = 45;
  s.translate = 0.3;
  s.flip = true;
  EXPECT_EQ(augmented(s, 5), augmented(s, 5));
  std::set<std::vector<float>> distinct;
  for (std::uint64_t k = 0; k < 10; ++k) distinct.insert(augmented(s, k));
  EXPECT_GE(distinct.size(), 8u);
  try {
    Augmenter a(s, Shape{60, 1, 1}, std::vector<float>(60, 0.0f), "synthetic");
    FAIL() << "tabular data accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("data.augment = affine needs images"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'synthetic' has samples 60x1x1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fedsilo::test
