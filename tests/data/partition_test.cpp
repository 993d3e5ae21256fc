#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <numeric>
#include <set>

#include "data/loaders.hpp"
#include "data/partition.hpp"
#include "data_test_util.hpp"
#include "support/test_support.hpp"

namespace fedsilo {
namespace {

using test::expectConfigError;
using test::expectDataError;

// Labels only: partitioners never look at features.
DataBundle bundleWithLabels(std::vector<std::int32_t> labels, int classes) {
  DataBundle b;
  b.name = "test";
  b.train.shape = Shape{1, 1, 1};
  b.train.numClasses = classes;
  b.train.f32.assign(labels.size(), 0.0f);
  b.train.labels = std::move(labels);
  return b;
}

// n samples, label i % classes.
DataBundle balanced(int n, int classes) {
  std::vector<std::int32_t> y(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) y[static_cast<std::size_t>(i)] = i % classes;
  return bundleWithLabels(std::move(y), classes);
}

PartitionConfig scheme(const std::string& s) {
  PartitionConfig p;
  p.scheme = parseEnum<PartitionScheme>("partition.scheme", s);
  return p;
}

// Every list ascending, no index twice, union == expected.
void expectDisjointAscending(const std::vector<IndexList>& parts, const std::set<Index>& expectedUnion) {
  std::set<Index> seen;
  std::size_t total = 0;
  for (const auto& p : parts) {
    EXPECT_TRUE(std::is_sorted(p.begin(), p.end()));
    EXPECT_TRUE(std::adjacent_find(p.begin(), p.end()) == p.end());
    seen.insert(p.begin(), p.end());
    total += p.size();
  }
  EXPECT_EQ(total, seen.size()) << "clients share samples";
  EXPECT_EQ(seen, expectedUnion);
}

std::set<Index> allIndices(Index n) {
  std::set<Index> s;
  for (Index i = 0; i < n; ++i) s.insert(i);
  return s;
}

double meanLabelEntropy(const DataBundle& b, const std::vector<IndexList>& parts) {
  double sum = 0;
  for (const auto& p : parts) {
    const auto counts = b.train.labelCounts(p);
    double h = 0;
    for (Index c : counts)
      if (c > 0) {
        const double q = static_cast<double>(c) / static_cast<double>(p.size());
        h -= q * std::log(q);
      }
    sum += h;
  }
  return sum / static_cast<double>(parts.size());
}

TEST(Partition, IidIsCompleteBalancedAndSeeded) {
  const DataBundle b = balanced(1003, 10);
  const auto p = partitionData(b, 10, scheme("iid"), 1);
  expectDisjointAscending(p, allIndices(1003));
  for (const auto& c : p) EXPECT_TRUE(c.size() == 100 || c.size() == 101);
  EXPECT_EQ(partitionData(b, 10, scheme("iid"), 1), p);
  EXPECT_NE(partitionData(b, 10, scheme("iid"), 2), p);
}

TEST(Partition, DirichletCompleteSeededAndSkewGrowsAsAlphaFalls) {
  const DataBundle b = balanced(5000, 10);
  PartitionConfig cfg = scheme("dirichlet");
  cfg.alpha = 0.5;
  const auto p = partitionData(b, 10, cfg, 0);
  expectDisjointAscending(p, allIndices(5000));
  EXPECT_EQ(partitionData(b, 10, cfg, 0), p);
  EXPECT_NE(partitionData(b, 10, cfg, 1), p);
  // Entropy of a client's label histogram: ln 10 = 2.30 for a uniform mix, 0 for a single label.
  // Average over seeds so that a single unlucky draw cannot flip the comparison.
  double hLow = 0, hHigh = 0;
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    cfg.alpha = 0.1;
    const auto pl = partitionData(b, 5, cfg, seed);
    cfg.alpha = 10.0;
    const auto ph = partitionData(b, 5, cfg, seed);
    expectDisjointAscending(pl, allIndices(5000));
    hLow += meanLabelEntropy(b, pl) / 3;
    hHigh += meanLabelEntropy(b, ph) / 3;
  }
  EXPECT_LT(hLow, 1.5);
  EXPECT_GT(hHigh, 2.1);
  EXPECT_LT(hLow + 0.5, hHigh);
  cfg.alpha = 0.0;
  EXPECT_THROW(partitionData(b, 5, cfg, 0), ConfigError);
}

TEST(Partition, DirichletCutsEachClassByCumulativeProportions) {
  // One class: client k's share of it is a contiguous piece of the shuffled class, so the sizes sum to
  // n_c and the last client takes the remainder.
  const DataBundle b = balanced(997, 1);
  PartitionConfig cfg = scheme("dirichlet");
  cfg.alpha = 1.0;
  const auto p = partitionData(b, 4, cfg, 9);
  std::size_t total = 0;
  for (const auto& c : p) total += c.size();
  EXPECT_EQ(total, 997u);
}

TEST(Partition, ShardsGiveAtMostMaxLabels) {
  // 10 labels x 100 samples, 20 label-pure shards of 50.
  const DataBundle b = balanced(1000, 10);
  PartitionConfig cfg = scheme("shards");
  cfg.shards = 20;
  cfg.shardsPerClientMin = cfg.shardsPerClientMax = 2;
  const auto p = partitionData(b, 10, cfg, 4);
  expectDisjointAscending(p, allIndices(1000));  // 10 x 2 = all 20 shards
  for (const auto& c : p) {
    EXPECT_EQ(c.size(), 100u);
    const auto counts = b.train.labelCounts(c);
    const long labels = std::count_if(counts.begin(), counts.end(), [](Index x) { return x > 0; });
    EXPECT_LE(labels, 2);
    for (Index x : counts) EXPECT_TRUE(x == 0 || x % 50 == 0);  // whole shards
  }
  EXPECT_EQ(partitionData(b, 10, cfg, 4), p);
  EXPECT_NE(partitionData(b, 10, cfg, 5), p);
}

// Labels with the given class sizes, interleaved (sample i's label is not sorted).
DataBundle withClassSizes(const std::vector<int>& sizes) {
  std::vector<std::int32_t> y;
  std::vector<int> left = sizes;
  for (bool more = true; more;) {
    more = false;
    for (std::size_t c = 0; c < left.size(); ++c)
      if (left[c] > 0) {
        y.push_back(static_cast<std::int32_t>(c));
        if (--left[c] > 0) more = true;
      }
  }
  return bundleWithLabels(std::move(y), static_cast<int>(sizes.size()));
}

long labelsOf(const DataBundle& b, const IndexList& idx) {
  const auto counts = b.train.labelCounts(idx);
  return std::count_if(counts.begin(), counts.end(), [](Index x) { return x > 0; });
}

TEST(Partition, ShardsByClassHandValues) {
  // Sizes 5, 3, 2 and S = 4: quotas 2.0, 1.2, 0.8 -> floors 2, 1, 0, the one left to the largest
  // remainder (class 2): 2, 1, 1 shards; class 0's five indices cut 2 + 3.
  const DataBundle b = withClassSizes({5, 3, 2});  // labels 0 1 2 0 1 2 0 1 0 0
  const auto sh = shardsByClass(b.train.labels, 3, 4);
  EXPECT_EQ(sh, (std::vector<IndexList>{{0, 3}, {6, 8, 9}, {1, 4, 7}, {2, 5}}));
  // Sizes 97, 2, 1 and S = 3: largest remainder gives 3, 0, 0; every non-empty class gets one: 1, 1, 1.
  const auto sh2 = shardsByClass(withClassSizes({97, 2, 1}).train.labels, 3, 3);
  ASSERT_EQ(sh2.size(), 3u);
  EXPECT_EQ(sh2[0].size(), 97u);
  EXPECT_EQ(sh2[1].size(), 2u);
  EXPECT_EQ(sh2[2].size(), 1u);
  // An absent class gets no shard; fewer shards than labels present cannot keep one label per shard.
  EXPECT_EQ(shardsByClass(withClassSizes({4, 0, 4}).train.labels, 3, 4).size(), 4u);
  expectConfigError([&] { shardsByClass(b.train.labels, 3, 2); }, {"partition.shards = 2", "3 labels"});
}

TEST(Partition, ShardsEqualThePlainCutWhenClassSizesAreMultiples) {
  // 10 classes of 120 (as FashionMNIST's 6000 per class with 200 or 1200 shards): shard s is exactly
  // the s-th of S equal pieces of the label-sorted indices, as before shards respected classes.
  const DataBundle b = balanced(1200, 10);
  IndexList sorted(1200);
  std::iota(sorted.begin(), sorted.end(), Index{0});
  std::stable_sort(sorted.begin(), sorted.end(), [&](Index x, Index y) {
    return b.train.labels[static_cast<std::size_t>(x)] < b.train.labels[static_cast<std::size_t>(y)];
  });
  for (int S : {10, 40, 120, 240}) {
    const auto sh = shardsByClass(b.train.labels, 10, S);
    ASSERT_EQ(sh.size(), static_cast<std::size_t>(S));
    for (int s = 0; s < S; ++s)
      EXPECT_EQ(sh[static_cast<std::size_t>(s)], IndexList(sorted.begin() + 1200 * s / S, sorted.begin() + 1200 * (s + 1) / S))
          << "S = " << S << ", shard " << s;
  }
}

TEST(Partition, ShardsRespectUnequalClassSizes) {
  // Class sizes that are not multiples of n / S (1000 / 50 = 20): a plain cut of the label-sorted
  // data would make shards spanning two labels, and clients with more labels than shards.
  const DataBundle b = withClassSizes({37, 120, 5, 88, 250, 61, 99, 140, 13, 187});
  for (const auto& sh : shardsByClass(b.train.labels, 10, 50)) EXPECT_EQ(labelsOf(b, sh), 1);
  PartitionConfig cfg = scheme("shards");
  cfg.shards = 50;
  cfg.shardsPerClientMin = cfg.shardsPerClientMax = 2;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const auto p = partitionData(b, 25, cfg, seed);
    expectDisjointAscending(p, allIndices(1000));  // 25 x 2 = all 50 shards: complete
    for (const auto& c : p) EXPECT_LE(labelsOf(b, c), 2) << "seed " << seed;
    EXPECT_EQ(partitionData(b, 25, cfg, seed), p);  // a pure function of the seed
  }
  EXPECT_NE(partitionData(b, 25, cfg, 0), partitionData(b, 25, cfg, 1));
  // The unbalanced variant: client k gets c_k in 1..4 shards, hence at most c_k <= 4 labels.
  cfg.shardsPerClientMin = 1;
  cfg.shardsPerClientMax = 4;
  for (std::uint64_t seed = 0; seed < 20; ++seed)
    for (const auto& c : partitionData(b, 12, cfg, seed)) EXPECT_LE(labelsOf(b, c), 4) << "seed " << seed;
}

TEST(Partition, UnbalancedShardsStayWithinBoundsAndTotal) {
  const DataBundle b = balanced(1000, 10);
  PartitionConfig cfg = scheme("shards");
  cfg.shards = 20;
  cfg.shardsPerClientMin = 1;
  cfg.shardsPerClientMax = 5;
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    const auto p = partitionData(b, 8, cfg, seed);
    std::size_t total = 0;
    std::set<std::size_t> sizes;
    for (const auto& c : p) {
      EXPECT_EQ(c.size() % 50, 0u);
      EXPECT_GE(c.size(), 50u);
      EXPECT_LE(c.size(), 250u);
      const auto counts = b.train.labelCounts(c);
      EXPECT_LE(std::count_if(counts.begin(), counts.end(), [](Index x) { return x > 0; }), 5);
      total += c.size();
      sizes.insert(c.size());
    }
    EXPECT_LE(total, 1000u);
    EXPECT_GT(sizes.size(), 1u);  // unbalanced
    std::set<Index> u;
    for (const auto& c : p) u.insert(c.begin(), c.end());
    EXPECT_EQ(u.size(), total);
  }
  cfg.shardsPerClientMin = 3;
  expectConfigError([&] { partitionData(b, 8, cfg, 0); }, {"8 clients", "24", "20"});
}

TEST(Partition, LabelsSchemeRoundRobin) {
  const DataBundle b = balanced(100, 10);
  const auto p = partitionData(b, 3, scheme("labels"), 0);
  expectDisjointAscending(p, allIndices(100));
  for (int k = 0; k < 3; ++k)
    for (Index i : p[static_cast<std::size_t>(k)]) EXPECT_EQ(b.train.labels[static_cast<std::size_t>(i)] % 3, k);
  expectConfigError([&] { partitionData(b, 11, scheme("labels"), 0); }, {"11 clients", "10 labels"});
}

TEST(Partition, FileReproducesTheFileExactly) {
  const std::string dir = test::tempDir("part_file");
  const DataBundle b = balanced(50, 5);
  std::vector<std::int16_t> ids(50);
  for (int i = 0; i < 50; ++i) ids[static_cast<std::size_t>(i)] = static_cast<std::int16_t>((i * 7 + i / 3) % 4);
  test::writeBytes(dir + "/p.npy", test::npyBytes("<i2", 50, test::rawLe(ids)));
  PartitionConfig cfg = scheme("file");
  cfg.file = dir + "/p.npy";
  const auto p = partitionData(b, 4, cfg, 123);
  expectDisjointAscending(p, allIndices(50));
  for (int k = 0; k < 4; ++k)
    for (Index i : p[static_cast<std::size_t>(k)]) EXPECT_EQ(ids[static_cast<std::size_t>(i)], k);
  // Wrong length, id out of range.
  expectDataError([&] { partitionData(balanced(51, 5), 4, cfg, 0); }, {"p.npy", "50", "51"});
  ids[17] = 4;
  test::writeBytes(dir + "/p.npy", test::npyBytes("<i2", 50, test::rawLe(ids)));
  expectDataError([&] { partitionData(b, 4, cfg, 0); }, {"p.npy", "client id 4", "position 17"});
  ids[17] = -1;
  test::writeBytes(dir + "/p.npy", test::npyBytes("<i2", 50, test::rawLe(ids)));
  expectDataError([&] { partitionData(b, 4, cfg, 0); }, {"client id -1", "position 17"});
}

TEST(Partition, ShippedFashionMnistPartitionFile) {
  const std::string path = "/work/shared/bench/partition_seed0_c10_a0.5.npy";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " absent";
  const DataBundle b = balanced(60000, 10);
  PartitionConfig cfg = scheme("file");
  cfg.file = path;
  const auto p = partitionData(b, 10, cfg, 0);
  std::vector<std::size_t> sizes;
  for (const auto& c : p) sizes.push_back(c.size());
  EXPECT_EQ(sizes, (std::vector<std::size_t>{6280, 6232, 3711, 6594, 3774, 3032, 7093, 7225, 5828, 10231}));
  expectDisjointAscending(p, allIndices(60000));
}

TEST(Partition, ShippedPartitionMatchesPublishedLabelCounts) {
  const std::string path = "/work/shared/bench/partition_seed0_c10_a0.5.npy";
  if (!std::filesystem::exists(path) || !std::filesystem::exists("/usr/share/datasets/fashion-mnist"))
    GTEST_SKIP() << "partition file or Fashion-MNIST absent";
  const DataBundle b = loadDataset(DataConfig{}, 0);
  PartitionConfig cfg = scheme("file");
  cfg.file = path;
  const auto p = partitionData(b, 10, cfg, 0);
  // PERF_BASELINE.md section 2, clients 0 and 9.
  EXPECT_EQ(b.train.labelCounts(p[0]), (std::vector<Index>{89, 399, 575, 148, 3001, 1320, 27, 77, 133, 511}));
  EXPECT_EQ(b.train.labelCounts(p[9]), (std::vector<Index>{88, 532, 901, 1582, 1900, 1153, 1417, 605, 2003, 50}));
}

TEST(Partition, NaturalUsesDatasetClients) {
  DataBundle b = balanced(9, 3);
  b.naturalClient = {2, 0, 1, 1, 2, 0, 0, 1, 2};
  b.numNaturalClients = 3;
  const auto p = partitionData(b, 3, scheme("natural"), 0);
  EXPECT_EQ(p[0], (IndexList{1, 5, 6}));
  EXPECT_EQ(p[1], (IndexList{2, 3, 7}));
  EXPECT_EQ(p[2], (IndexList{0, 4, 8}));
  expectConfigError([&] { partitionData(b, 4, scheme("natural"), 0); }, {"4", "3 natural clients"});
  expectConfigError([&] { partitionData(balanced(9, 3), 3, scheme("natural"), 0); }, {"no natural partition"});
}

TEST(Partition, SamplesPerClientKeepsSeededSubset) {
  const DataBundle b = balanced(1000, 10);
  PartitionConfig cfg = scheme("iid");
  const auto full = partitionData(b, 4, cfg, 8);
  cfg.samplesPerClient = 30;
  const auto p = partitionData(b, 4, cfg, 8);
  std::set<Index> kept;
  for (int k = 0; k < 4; ++k) {
    const auto& c = p[static_cast<std::size_t>(k)];
    EXPECT_EQ(c.size(), 30u);
    EXPECT_TRUE(std::is_sorted(c.begin(), c.end()));
    EXPECT_TRUE(std::includes(full[static_cast<std::size_t>(k)].begin(), full[static_cast<std::size_t>(k)].end(), c.begin(), c.end()));
    // Not simply the first 30 of the slice.
    EXPECT_NE(c, IndexList(full[static_cast<std::size_t>(k)].begin(), full[static_cast<std::size_t>(k)].begin() + 30));
    kept.insert(c.begin(), c.end());
  }
  expectDisjointAscending(p, kept);
  EXPECT_EQ(partitionData(b, 4, cfg, 8), p);
  cfg.samplesPerClient = 10000;  // larger than every slice: no-op
  EXPECT_EQ(partitionData(b, 4, cfg, 8), full);
}

TEST(Partition, MoreClientsThanSamplesIsAConfigError) {
  const DataBundle b = balanced(5, 5);
  expectConfigError([&] { partitionData(b, 6, scheme("iid"), 0); }, {"client", "fewer clients"});
  PartitionConfig d = scheme("dirichlet");
  d.alpha = 0.5;
  expectConfigError([&] { partitionData(b, 6, d, 0); }, {"fewer clients"});
  expectConfigError([&] { partitionData(b, 2, scheme("nonsense"), 0); }, {"nonsense", "dirichlet"});
}

TEST(SplitClient, FractionsDisjointAscendingSeeded) {
  IndexList slice(100);
  std::iota(slice.begin(), slice.end(), Index{1000});
  const ClientSplit s = splitClient(slice, {0.8, 0.1, 0.1}, 3, 7);
  EXPECT_EQ(s.train.size(), 80u);
  EXPECT_EQ(s.val.size(), 10u);
  EXPECT_EQ(s.test.size(), 10u);
  std::set<Index> u;
  for (const IndexList* part : {&s.train, &s.val, &s.test}) {
    EXPECT_TRUE(std::is_sorted(part->begin(), part->end()));
    u.insert(part->begin(), part->end());
  }
  EXPECT_EQ(u, std::set<Index>(slice.begin(), slice.end()));
  const ClientSplit again = splitClient(slice, {0.8, 0.1, 0.1}, 3, 7);
  EXPECT_EQ(again.test, s.test);
  EXPECT_NE(splitClient(slice, {0.8, 0.1, 0.1}, 3, 8).test, s.test);  // keyed by client
  EXPECT_NE(splitClient(slice, {0.8, 0.1, 0.1}, 4, 7).test, s.test);  // and by seed
  // Input order does not matter.
  IndexList reversed(slice.rbegin(), slice.rend());
  EXPECT_EQ(splitClient(reversed, {0.8, 0.1, 0.1}, 3, 7).test, s.test);
}

TEST(SplitClient, ZeroFractions) {
  IndexList slice(37);
  std::iota(slice.begin(), slice.end(), Index{0});
  ClientSplit s = splitClient(slice, {1.0, 0.0, 0.0}, 0, 0);
  EXPECT_EQ(s.train, slice);
  EXPECT_TRUE(s.val.empty() && s.test.empty());
  s = splitClient(slice, {0.0, 0.0, 1.0}, 0, 0);
  EXPECT_EQ(s.test, slice);
  EXPECT_TRUE(s.train.empty() && s.val.empty());
  s = splitClient(slice, {0.5, 0.0, 0.5}, 0, 0);
  EXPECT_TRUE(s.val.empty());
  EXPECT_EQ(s.train.size() + s.test.size(), 37u);
  EXPECT_LE(std::abs(static_cast<long>(s.train.size()) - static_cast<long>(s.test.size())), 1);
  s = splitClient(slice, {0.7, 0.3, 0.0}, 0, 0);
  EXPECT_TRUE(s.test.empty());
  EXPECT_EQ(s.train.size(), 26u);  // round(25.9)
  // A one-sample client with a positive train fraction keeps its sample for training.
  s = splitClient({42}, {0.3, 0.35, 0.35}, 0, 0);
  EXPECT_EQ(s.train, (IndexList{42}));
  EXPECT_TRUE(splitClient({}, {0.8, 0.1, 0.1}, 0, 0).train.empty());
}

TEST(SplitClient, RejectsBadFractions) {
  const IndexList slice = {1, 2, 3};
  expectConfigError([&] { splitClient(slice, {0.8, 0.1}, 0, 0); }, {"3 fractions"});
  expectConfigError([&] { splitClient(slice, {0.8, 0.1, 0.2}, 0, 0); }, {"sum to 1"});
  expectConfigError([&] { splitClient(slice, {1.2, -0.1, -0.1}, 0, 0); }, {"non-negative"});
  expectConfigError([&] { splitClient(slice, {0.5, NAN, 0.5}, 0, 0); }, {"non-negative"});
  EXPECT_NO_THROW(splitClient(slice, {0.8, 0.1, 0.1 + 5e-7}, 0, 0));
}

}  // namespace
}  // namespace fedsilo
