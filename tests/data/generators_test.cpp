// Synthetic(alpha, beta) and the built-in sequence task.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "data/loaders.hpp"
#include "data_test_util.hpp"

namespace fedsilo {
namespace {

DataConfig syntheticConfig(int users) {
  DataConfig cfg;
  cfg.dataset = DatasetKind::Synthetic;
  cfg.users = users;
  return cfg;
}

TEST(Synthetic, ShapesSizesAndPerUserSplit) {
  const DataBundle b = loadDataset(syntheticConfig(100), 7);
  EXPECT_EQ(b.train.shape, (Shape{60, 1, 1}));
  EXPECT_EQ(b.train.numClasses, 10);
  EXPECT_EQ(b.numNaturalClients, 100);
  ASSERT_EQ(b.naturalClient.size(), static_cast<std::size_t>(b.train.size()));
  ASSERT_EQ(b.naturalClientTest.size(), static_cast<std::size_t>(b.test.size()));
  ASSERT_EQ(b.train.f32.size(), static_cast<std::size_t>(b.train.size()) * 60);
  std::vector<long> nTrain(100, 0), nTest(100, 0);
  for (auto c : b.naturalClient) ++nTrain[static_cast<std::size_t>(c)];
  for (auto c : b.naturalClientTest) ++nTest[static_cast<std::size_t>(c)];
  for (int u = 0; u < 100; ++u) {
    const long n = nTrain[static_cast<std::size_t>(u)] + nTest[static_cast<std::size_t>(u)];
    EXPECT_GE(n, 50) << "user " << u;  // floor(LogNormal) + 50
    EXPECT_EQ(nTrain[static_cast<std::size_t>(u)], static_cast<long>(0.9 * static_cast<double>(n))) << "user " << u;
  }
  // Users are contiguous and in order.
  EXPECT_TRUE(std::is_sorted(b.naturalClient.begin(), b.naturalClient.end()));
  // A heavy-tailed size distribution: the median user is small, the total much larger than 100 x 50.
  std::vector<long> sizes(100);
  for (int u = 0; u < 100; ++u) sizes[static_cast<std::size_t>(u)] = nTrain[static_cast<std::size_t>(u)] + nTest[static_cast<std::size_t>(u)];
  std::sort(sizes.begin(), sizes.end());
  EXPECT_LT(sizes[50], 400);
  EXPECT_GT(sizes[99], 400);
  // Labels in range and not degenerate.
  std::set<int> labels(b.train.labels.begin(), b.train.labels.end());
  EXPECT_GE(labels.size(), 5u);
  EXPECT_LE(*labels.rbegin(), 9);
  for (float x : b.train.f32) ASSERT_TRUE(std::isfinite(x));
}

TEST(Synthetic, DeterministicAndPerUserStreams) {
  const DataBundle a = loadDataset(syntheticConfig(20), 3);
  const DataBundle b = loadDataset(syntheticConfig(20), 3);
  EXPECT_EQ(a.train.f32, b.train.f32);
  EXPECT_EQ(a.train.labels, b.train.labels);
  EXPECT_EQ(a.test.f32, b.test.f32);
  const DataBundle c = loadDataset(syntheticConfig(20), 4);
  EXPECT_NE(a.train.f32, c.train.f32);
  // User u's data depends only on (seed, u): 5 users are a prefix of 20.
  const DataBundle d = loadDataset(syntheticConfig(5), 3);
  ASSERT_LE(d.train.f32.size(), a.train.f32.size());
  EXPECT_TRUE(std::equal(d.train.f32.begin(), d.train.f32.end(), a.train.f32.begin()));
  EXPECT_TRUE(std::equal(d.train.labels.begin(), d.train.labels.end(), a.train.labels.begin()));
}

TEST(Synthetic, FeatureVarianceFollowsSigma) {
  // x_j = v_kj + N(0, (j+1)^-1.2): around each user's own mean, feature j varies with variance
  // (j+1)^-1.2. Pool the within-user variance over all users.
  const DataBundle b = loadDataset(syntheticConfig(30), 11);
  const std::size_t n = static_cast<std::size_t>(b.train.size());
  auto withinVariance = [&](std::size_t j) {
    std::vector<double> sum(30, 0.0), cnt(30, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      sum[static_cast<std::size_t>(b.naturalClient[i])] += b.train.f32[i * 60 + j];
      cnt[static_cast<std::size_t>(b.naturalClient[i])] += 1;
    }
    double ss = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t u = static_cast<std::size_t>(b.naturalClient[i]);
      const double z = b.train.f32[i * 60 + j] - sum[u] / cnt[u];
      ss += z * z;
    }
    return ss / static_cast<double>(n - 30);
  };
  for (std::size_t j : {0, 4, 59}) {
    const double want = std::pow(static_cast<double>(j + 1), -1.2);
    EXPECT_NEAR(withinVariance(j), want, 0.1 * want) << "feature " << j;
  }
}

DataConfig sequenceConfig() {
  DataConfig cfg;
  cfg.dataset = DatasetKind::Sequence;
  cfg.users = 6;
  cfg.samplesPerUser = 50;
  cfg.seqLength = 12;
  cfg.vocabSize = 30;
  return cfg;
}

TEST(Sequence, ShapesVocabularyAndLearnableLabels) {
  const DataConfig cfg = sequenceConfig();
  const DataBundle b = loadDataset(cfg, 5);
  EXPECT_EQ(b.train.size(), 6 * 50);
  EXPECT_EQ(b.test.size(), 6 * 10);
  EXPECT_EQ(b.train.shape, (Shape{1, 1, 12}));
  EXPECT_EQ(b.train.numClasses, 4);
  ASSERT_EQ(b.vocabulary.size(), 30u);
  EXPECT_EQ(b.vocabSize, 30);
  EXPECT_EQ(b.vocabulary[0], "<pad>");
  EXPECT_EQ(b.vocabulary[1], "<unk>");
  EXPECT_EQ(b.numNaturalClients, 6);
  // kw = min(4, (30 - 2) / (2 * 4)) = 3 keywords per class at ids 2..13.
  const int kw = 3;
  for (const Dataset* ds : {&b.train, &b.test}) {
    for (Index i = 0; i < ds->size(); ++i) {
      std::vector<int> count(4, 0);
      for (int p = 0; p < 12; ++p) {
        const float t = ds->f32[static_cast<std::size_t>(i * 12 + p)];
        ASSERT_EQ(t, std::floor(t));
        ASSERT_GE(t, 2.0f);
        ASSERT_LT(t, 30.0f);
        if (t < 2 + 4 * kw) ++count[static_cast<std::size_t>((static_cast<int>(t) - 2) / kw)];
      }
      // The label is the unique most frequent keyword class.
      const int y = ds->labels[static_cast<std::size_t>(i)];
      for (int c = 0; c < 4; ++c) {
        if (c != y) {
          ASSERT_GT(count[static_cast<std::size_t>(y)], count[static_cast<std::size_t>(c)]) << "sample " << i;
        }
      }
      ASSERT_EQ(b.vocabulary[static_cast<std::size_t>(2 + y * kw)], "kw" + std::to_string(y) + "_0");
    }
  }
  // Users differ in their label distributions (label skew).
  std::set<std::vector<int>> histograms;
  for (int u = 0; u < 6; ++u) {
    std::vector<int> h(4, 0);
    for (Index i = 0; i < b.train.size(); ++i)
      if (b.naturalClient[static_cast<std::size_t>(i)] == u) ++h[static_cast<std::size_t>(b.train.labels[static_cast<std::size_t>(i)])];
    histograms.insert(h);
  }
  EXPECT_EQ(histograms.size(), 6u);
}

TEST(Sequence, DeterministicAndValidated) {
  DataConfig cfg = sequenceConfig();
  const DataBundle a = loadDataset(cfg, 1), b = loadDataset(cfg, 1), c = loadDataset(cfg, 2);
  EXPECT_EQ(a.train.f32, b.train.f32);
  EXPECT_EQ(a.train.labels, b.train.labels);
  EXPECT_NE(a.train.f32, c.train.f32);
  cfg.numClasses = 3;
  EXPECT_EQ(loadDataset(cfg, 1).train.numClasses, 3);
  cfg.vocabSize = 5;  // 3 classes need at least 6 tokens
  test::expectConfigError([&] { loadDataset(cfg, 1); }, {"vocab_size", "6"});
  cfg = sequenceConfig();
  cfg.seqLength = 0;
  EXPECT_THROW(loadDataset(cfg, 1), ConfigError);
}

}  // namespace
}  // namespace fedsilo
