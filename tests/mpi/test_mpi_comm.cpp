// Collectives against serial computations, at 1, 2 and 4 ranks.
#include <gtest/gtest.h>

#include <cmath>

#include "comm/communicator.hpp"
#include "comm/placement.hpp"
#include "core/rng.hpp"

using namespace fedsilo;

TEST(Comm, ReduceAndGathervEqualSerial) {
  Communicator comm = Communicator::world();
  const int P = comm.size(), r = comm.rank();
  // Each rank contributes r+1 values; the serial reference is computed on every rank.
  std::vector<double> mine(static_cast<std::size_t>(r + 1));
  for (int i = 0; i <= r; ++i) mine[i] = 100.0 * r + i;
  std::vector<int> counts;
  std::vector<double> all = comm.gatherv(mine, 0, &counts);
  if (comm.isRoot()) {
    std::vector<double> expect;
    for (int q = 0; q < P; ++q)
      for (int i = 0; i <= q; ++i) expect.push_back(100.0 * q + i);
    EXPECT_EQ(all, expect);
    ASSERT_EQ(static_cast<int>(counts.size()), P);
    for (int q = 0; q < P; ++q) EXPECT_EQ(counts[q], q + 1);
  } else {
    EXPECT_TRUE(all.empty());
  }
  std::vector<double> v{1.0 * r, 2.0, -0.5 * r};
  std::vector<double> out(3, 0.0);
  comm.reduceSum(v.data(), out.data(), 3, 0);
  if (comm.isRoot()) {
    EXPECT_DOUBLE_EQ(out[0], P * (P - 1) / 2.0);
    EXPECT_DOUBLE_EQ(out[1], 2.0 * P);
    EXPECT_DOUBLE_EQ(out[2], -0.25 * P * (P - 1));
  }
  EXPECT_EQ(comm.allreduceSum<std::int64_t>(r + 1), static_cast<std::int64_t>(P * (P + 1) / 2));
  EXPECT_EQ(comm.allreduceMax(r), P - 1);
  EXPECT_EQ(comm.allreduceMin(r), 0);
  std::vector<float> b;
  if (comm.isRoot()) b = {1.5f, 2.5f};
  comm.bcast(b, 0);
  EXPECT_EQ(b, (std::vector<float>{1.5f, 2.5f}));
  std::string s = comm.isRoot() ? "config text" : "";
  comm.bcast(s, 0);
  EXPECT_EQ(s, "config text");
}

TEST(Comm, ExactReductionIsBitIdenticalToSerialSum) {
  Communicator comm = Communicator::world();
  // 40 "clients" with wildly scaled values, distributed over the ranks: the result must equal the
  // single-process exact sum bit for bit, whatever the number of ranks.
  const int K = 40, n = 257;
  Placement pl(K, comm.size());
  auto value = [](int k, int i) {
    Rng rng(9, k, i, Purpose::Misc);
    return (rng.uniform() - 0.5) * std::pow(10.0, static_cast<double>(rng.below(16)) - 8.0);
  };
  ExactSum local(n), serial(n);
  for (int k = 0; k < K; ++k)
    for (int i = 0; i < n; ++i) {
      serial.add(i, value(k, i));
      if (pl.owner(k) == comm.rank()) local.add(i, value(k, i));
    }
  comm.reduceExact(local, 0);
  if (comm.isRoot()) {
    for (int i = 0; i < n; ++i) EXPECT_EQ(local.value(i), serial.value(i)) << i;
  }
  ExactSum all(n);
  for (int k = 0; k < K; ++k)
    if (pl.owner(k) == comm.rank())
      for (int i = 0; i < n; ++i) all.add(i, value(k, i));
  comm.allreduceExact(all);
  for (int i = 0; i < n; ++i) EXPECT_EQ(all.value(i), serial.value(i)) << i;
}

TEST(Comm, CoordinatedErrorsReachEveryRank) {
  Communicator comm = Communicator::world();
  const int bad = comm.size() - 1;  // the last rank fails with a data error
  bool sawOwn = false, sawPeer = false;
  try {
    coordinated(comm, [&] {
      if (comm.rank() == bad) throw DataError("bad file on one rank");
    });
  } catch (const PeerFailure& e) {
    sawPeer = true;
    EXPECT_EQ(e.code(), ExitCode::Data);
  } catch (const DataError&) {
    sawOwn = true;
  }
  EXPECT_EQ(sawOwn, comm.rank() == bad);
  EXPECT_EQ(sawPeer, comm.rank() != bad);
  // No failure: nobody throws.
  EXPECT_NO_THROW(coordinated(comm, [] {}));
  // Several ranks fail: only the lowest failing rank rethrows its own error (printed once).
  int own = 0;
  try {
    coordinated(comm, [&] { throw ConfigError("everywhere"); });
  } catch (const PeerFailure& e) {
    EXPECT_EQ(e.code(), ExitCode::Config);
  } catch (const ConfigError&) {
    own = 1;
  }
  EXPECT_EQ(comm.allreduceSum(own), 1);
  EXPECT_EQ(own, comm.isRoot() ? 1 : 0);
}
