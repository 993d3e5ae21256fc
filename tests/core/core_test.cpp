#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/exact_sum.hpp"
#include "core/rng.hpp"
#include "core/strings.hpp"

using namespace fedsilo;

TEST(Rng, SameKeySameStreamDifferentKeyDifferentStream) {
  Rng a(7, 3, 2, Purpose::Shuffle), b(7, 3, 2, Purpose::Shuffle);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next(), b.next());
  std::set<std::uint64_t> firsts;
  firsts.insert(Rng(7, 3, 2, Purpose::Shuffle).next());
  firsts.insert(Rng(8, 3, 2, Purpose::Shuffle).next());
  firsts.insert(Rng(7, 4, 2, Purpose::Shuffle).next());
  firsts.insert(Rng(7, 3, 3, Purpose::Shuffle).next());
  firsts.insert(Rng(7, 3, 2, Purpose::Select).next());
  EXPECT_EQ(firsts.size(), 5u);
}

TEST(Rng, UniformAndBelowAreInRangeAndRoughlyUniform) {
  Rng r(1, -1, -1, Purpose::Misc);
  std::vector<int> hist(10, 0);
  for (int i = 0; i < 100000; ++i) {
    const double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    const auto k = r.below(10);
    ASSERT_LT(k, 10u);
    hist[k]++;
  }
  for (int h : hist) EXPECT_NEAR(h, 10000, 500);
}

TEST(Rng, NormalAndGammaMoments) {
  Rng r(2, -1, -1, Purpose::Misc);
  const int n = 200000;
  double s = 0, s2 = 0, g = 0;
  for (int i = 0; i < n; ++i) {
    const double x = r.normal();
    s += x;
    s2 += x * x;
    g += r.gamma(0.5);
  }
  EXPECT_NEAR(s / n, 0.0, 0.01);
  EXPECT_NEAR(s2 / n, 1.0, 0.02);
  EXPECT_NEAR(g / n, 0.5, 0.01);  // E[Gamma(k,1)] = k
  const auto d = r.dirichlet({0.5, 0.5, 0.5});
  EXPECT_NEAR(d[0] + d[1] + d[2], 1.0, 1e-12);
}

TEST(Rng, ShuffleIsAPermutation) {
  Rng r(3, 0, 0, Purpose::Shuffle);
  std::vector<int> v(1000);
  std::iota(v.begin(), v.end(), 0);
  r.shuffle(v);
  std::vector<int> s = v;
  std::sort(s.begin(), s.end());
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(s[i], i);
  EXPECT_NE(v[0] * 1000 + v[1], 1);  // not the identity (probability ~1e-6)
}

TEST(ExactSum, OrderIndependentAndExact) {
  // Terms spanning 30 orders of magnitude: a double sum depends on the order, the exact sum must not.
  std::vector<double> terms;
  Rng r(4, -1, -1, Purpose::Misc);
  for (int i = 0; i < 5000; ++i) terms.push_back((r.uniform() - 0.5) * std::pow(10.0, r.below(30) - 12.0));
  ExactSum a(1), b(1);
  for (double t : terms) a.add(0, t);
  std::vector<double> rev(terms.rbegin(), terms.rend());
  for (double t : rev) b.add(0, t);
  EXPECT_EQ(a.value(0), b.value(0));
  // Merging partial sums in any grouping gives the same bits.
  ExactSum p1(1), p2(1), p3(1);
  for (std::size_t i = 0; i < terms.size(); ++i) (i % 3 == 0 ? p1 : i % 3 == 1 ? p2 : p3).add(0, terms[i]);
  p3.merge(p1);
  p3.merge(p2);
  EXPECT_EQ(p3.value(0), a.value(0));
  // Simple exact values, negative numbers included.
  ExactSum c(1);
  c.add(0, 0.1);
  c.add(0, -0.3);
  c.add(0, 0.2);
  EXPECT_NEAR(c.value(0), 0.0, 1e-18);
  ExactSum d(1);
  d.add(0, -2.5);
  EXPECT_EQ(d.value(0), -2.5);
}

TEST(Strings, ParseListsAndErrorsNameTheValue) {
  EXPECT_EQ(parseIntList("200, 200", "model.hidden"), (std::vector<int>{200, 200}));
  EXPECT_EQ(parseDoubleList("0.8,0.1,0.1", "data.split").size(), 3u);
  try {
    parseDouble("abc", "train.lr");
    FAIL() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("train.lr"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("abc"), std::string::npos);
    EXPECT_EQ(e.code(), ExitCode::Config);
  }
  EXPECT_THROW(parseInt("3.5", "clients"), ConfigError);
}

TEST(OptionValues, TypedGettersValidate) {
  OptionValues o;
  o.set("fedprox.mu", "0.1");
  o.set("x.flag", "yes");
  o.set("x.list", "1,2");
  EXPECT_DOUBLE_EQ(o.getDouble("fedprox.mu", 0, 1), 0.1);
  EXPECT_THROW(o.getDouble("fedprox.mu", 0.5, 1), ConfigError);
  EXPECT_TRUE(o.getBool("x.flag"));
  EXPECT_EQ(o.getIntList("x.list", 0, 5), (std::vector<int>{1, 2}));
  EXPECT_THROW(o.getIntList("x.list", 0, 1), ConfigError);
  EXPECT_THROW(o.raw("missing.key"), ConfigError);
}
