// Each attack's payload on a small update matrix, and the choice of the malicious silos.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "robust/attack.hpp"

using namespace fedsilo;

namespace {

UpdateMatrix matrix(const std::vector<std::vector<float>>& rows) {
  UpdateMatrix u(static_cast<int>(rows.size()), rows[0].size());
  for (std::size_t k = 0; k < rows.size(); ++k)
    for (std::size_t i = 0; i < rows[k].size(); ++i) u.row(static_cast<int>(k))[i] = rows[k][i];
  return u;
}

AttackRound roundOf(std::vector<char> malicious, int round = 3) {
  AttackRound r;
  r.seed = 7;
  r.round = round;
  r.malicious = std::move(malicious);
  r.clients.resize(r.malicious.size());
  std::iota(r.clients.begin(), r.clients.end(), 10);
  return r;
}

AttackConfig attack(AttackKind kind) {
  AttackConfig c;
  c.kind = kind;
  return c;
}

}  // namespace

TEST(Attack, LabelFlipMirrorsTheClasses) {
  EXPECT_EQ(flipLabel(0, 10), 9);
  EXPECT_EQ(flipLabel(9, 10), 0);
  EXPECT_EQ(flipLabel(3, 10), 6);
}

TEST(Attack, SignFlipAndScaleRescaleOnlyTheMaliciousRows) {
  UpdateMatrix u = matrix({{1, -2}, {3, 4}});
  AttackConfig c = attack(AttackKind::SignFlip);
  applyAttack(c, roundOf({0, 1}), u);
  EXPECT_EQ(u.row(0)[0], 1.0f);
  EXPECT_EQ(u.row(1)[0], -3.0f);
  EXPECT_EQ(u.row(1)[1], -4.0f);
  c.scale = 2.5;
  applyAttack(c, roundOf({1, 0}), u);
  EXPECT_EQ(u.row(0)[1], 5.0f);
  UpdateMatrix v = matrix({{1, -2}, {3, 4}, {0, 0}});
  applyAttack(attack(AttackKind::Scale), roundOf({1, 0, 0}), v);  // default s = number of rows
  EXPECT_EQ(v.row(0)[0], 3.0f);
  EXPECT_EQ(v.row(0)[1], -6.0f);
}

TEST(Attack, NothingBeforeTheStartRound) {
  UpdateMatrix u = matrix({{1, 2}});
  AttackConfig c = attack(AttackKind::SignFlip);
  c.startRound = 5;
  applyAttack(c, roundOf({1}, 4), u);
  EXPECT_EQ(u.row(0)[0], 1.0f);
  applyAttack(c, roundOf({1}, 5), u);
  EXPECT_EQ(u.row(0)[0], -1.0f);
}

TEST(Attack, GaussianIsKeyedNoiseOfTheUpdatesNorm) {
  const std::size_t n = 20000;
  UpdateMatrix u(2, n), again(2, n);
  for (std::size_t i = 0; i < n; ++i) u.row(0)[i] = u.row(1)[i] = again.row(0)[i] = again.row(1)[i] = 0.5f;
  applyAttack(attack(AttackKind::Gaussian), roundOf({1, 0}), u);
  applyAttack(attack(AttackKind::Gaussian), roundOf({1, 0}), again);
  EXPECT_EQ(u.values, again.values);  // keyed by (seed, client, round): reproducible
  EXPECT_NEAR(std::sqrt(squaredNorm(u.row(0), n)), 0.5 * std::sqrt(static_cast<double>(n)), 2.0);
  EXPECT_EQ(u.row(1)[0], 0.5f);
  double mean = 0.0;
  for (std::size_t i = 0; i < n; ++i) mean += u.row(0)[i];
  EXPECT_NEAR(mean / n, 0.0, 0.02);
  UpdateMatrix other(2, n);
  for (std::size_t i = 0; i < n; ++i) other.row(0)[i] = 0.5f;
  applyAttack(attack(AttackKind::Gaussian), roundOf({1, 0}, 4), other);
  EXPECT_NE(other.row(0)[0], u.row(0)[0]);  // another round, another draw
}

TEST(Attack, AlieSendsMeanMinusZStdOfTheHonestRows) {
  UpdateMatrix u = matrix({{1, 10}, {3, 10}, {100, -100}});
  AttackConfig c = attack(AttackKind::Alie);
  c.z = 1.5;
  applyAttack(c, roundOf({0, 0, 1}), u);
  EXPECT_FLOAT_EQ(u.row(2)[0], static_cast<float>(2.0 - 1.5 * 1.0));  // honest mean 2, std 1
  EXPECT_FLOAT_EQ(u.row(2)[1], 10.0f);                                // std 0
  EXPECT_EQ(u.row(0)[0], 1.0f);
}

TEST(Attack, AlieDefaultZFollowsThePaper) {
  // n = 50, m = 12 (the paper's CIFAR setting, 24%): s = 26 - 12 = 14, z = Phi^-1(36/50) ~ 0.583.
  EXPECT_NEAR(alieZ(attack(AttackKind::Alie), 50, 12), 0.5828, 1e-3);
  EXPECT_NEAR(normalQuantile(0.975), 1.959964, 1e-6);
  EXPECT_EQ(alieZ(attack(AttackKind::Alie), 20, 1), 0.0);  // s = 10: probability 1/2
}

TEST(Attack, IpmSendsMinusEpsilonTimesTheHonestMean) {
  UpdateMatrix u = matrix({{2, 4}, {4, 8}, {9, 9}, {9, 9}});
  AttackConfig c = attack(AttackKind::Ipm);
  c.epsilon = 0.5;
  applyAttack(c, roundOf({0, 0, 1, 1}), u);
  for (int k : {2, 3}) {
    EXPECT_FLOAT_EQ(u.row(k)[0], -1.5f);
    EXPECT_FLOAT_EQ(u.row(k)[1], -3.0f);
  }
}

TEST(Attack, MaliciousSetIsGivenOrKeyedByTheSeed) {
  AttackConfig c = attack(AttackKind::SignFlip);
  c.clientIds = {0, 3, 7};
  EXPECT_EQ(chooseMalicious(c, 8, 1), (std::vector<char>{1, 0, 0, 1, 0, 0, 0, 1}));
  c.clientIds.clear();
  c.clients = 4;
  const std::vector<char> a = chooseMalicious(c, 20, 5);
  EXPECT_EQ(std::count(a.begin(), a.end(), 1), 4);
  EXPECT_EQ(a, chooseMalicious(c, 20, 5));
  bool differs = false;
  for (std::uint64_t seed = 6; seed < 10; ++seed) differs = differs || chooseMalicious(c, 20, seed) != a;
  EXPECT_TRUE(differs);
  const std::vector<char> none = chooseMalicious(AttackConfig{}, 5, 1);
  EXPECT_EQ(std::count(none.begin(), none.end(), 1), 0);
}
