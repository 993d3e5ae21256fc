// Collectives against serial computations, at 1, 2 and 4 ranks.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "comm/communicator.hpp"
#include "comm/placement.hpp"
#include "comm/reused_buffers.hpp"
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

namespace {

// Rank q's piece in call c of the two tests below: 100 q + i + 0.5 c for i < q + 1 + 5 c.
std::vector<double> gatherPiece(int q, int call) {
  std::vector<double> piece(static_cast<std::size_t>(q + 1 + 5 * call));
  for (std::size_t i = 0; i < piece.size(); ++i) piece[i] = 100.0 * q + static_cast<double>(i) + 0.5 * call;
  return piece;
}

}  // namespace

TEST(Comm, AllgatherIntoAKeptBufferHoldsEveryRanksPieceInRankOrder) {
  Communicator comm = Communicator::world();
  // Into a buffer longer than the result, then one shorter: its old contents never show through.
  std::vector<double> all(1000, -1.0);
  for (int call = 0; call < 2; ++call) {
    std::vector<double> expect;
    for (int q = 0; q < comm.size(); ++q) {
      const std::vector<double> piece = gatherPiece(q, call);
      expect.insert(expect.end(), piece.begin(), piece.end());
    }
    allgathervInto(comm, gatherPiece(comm.rank(), call), all);
    EXPECT_EQ(all, expect);
    EXPECT_EQ(comm.allgatherv(gatherPiece(comm.rank(), call)), expect);
  }
}

namespace {

// What source s sends rank d in call c: 1000 s + 10 d + i for i < s + d + 3 c.
std::vector<float> alltoallPiece(int s, int d, int call) {
  std::vector<float> piece;
  for (int i = 0; i < s + d + 3 * call; ++i) piece.push_back(static_cast<float>(1000 * s + 10 * d + i));
  return piece;
}

}  // namespace

TEST(Comm, AlltoallIntoAKeptBufferHoldsEachSourcesPieceInRankOrder) {
  Communicator comm = Communicator::world();
  const int P = comm.size(), r = comm.rank();
  std::vector<float> got(1000, -1.0f);  // longer than the result, then shorter
  for (int call = 0; call < 2; ++call) {
    std::vector<std::vector<float>> toRank(static_cast<std::size_t>(P));
    for (int d = 0; d < P; ++d) toRank[static_cast<std::size_t>(d)] = alltoallPiece(r, d, call);
    std::vector<float> expect;
    std::vector<int> expectCounts;
    for (int s = 0; s < P; ++s) {
      const std::vector<float> piece = alltoallPiece(s, r, call);
      expect.insert(expect.end(), piece.begin(), piece.end());
      expectCounts.push_back(static_cast<int>(piece.size()));
    }
    std::vector<int> counts, freshCounts;
    alltoallvInto(comm, toRank, got, &counts);
    EXPECT_EQ(got, expect);
    EXPECT_EQ(counts, expectCounts);
    EXPECT_EQ(comm.alltoallv(toRank, &freshCounts), expect);
    EXPECT_EQ(freshCounts, expectCounts);
  }
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

TEST(Comm, AgreedFailuresCarryTheMarkInTheException) {
  Communicator comm = Communicator::world();
  // The reporting rank gets its own error back, of its own type, marked agreed; the others PeerFailure.
  try {
    coordinated(comm, [&] { throw ConfigError("everywhere"); });
    FAIL() << "coordinated() did not throw";
  } catch (const PeerFailure& e) {
    EXPECT_TRUE(e.agreed());
    EXPECT_TRUE(agreedFailure(e));
    EXPECT_FALSE(comm.isRoot());
  } catch (const ConfigError& e) {
    EXPECT_TRUE(e.agreed());
    EXPECT_TRUE(agreedFailure(e));
    EXPECT_TRUE(agreedFailure(std::current_exception()));
    EXPECT_STREQ(e.what(), "everywhere");
  }
  // An exception that is not a fedsilo::Error comes back as a RuntimeError with the same message, so
  // that the mark has a place to live.
  try {
    coordinated(comm, [&] {
      if (comm.isRoot()) throw std::out_of_range("index 7 of 3");
    });
    FAIL() << "coordinated() did not throw";
  } catch (const PeerFailure& e) {
    EXPECT_FALSE(comm.isRoot());
  } catch (const RuntimeError& e) {
    EXPECT_TRUE(comm.isRoot());
    EXPECT_TRUE(agreedFailure(e));
    EXPECT_EQ(e.code(), ExitCode::Other);
    EXPECT_STREQ(e.what(), "index 7 of 3");
  }
  // Errors outside coordinated() are not agreed, and the mark is per exception: a later error of
  // this process starts unmarked.
  try {
    throw DataError("only here");
  } catch (const DataError& e) {
    EXPECT_FALSE(e.agreed());
    EXPECT_FALSE(agreedFailure(e));
    EXPECT_FALSE(agreedFailure(std::current_exception()));
  }
  try {
    throw std::runtime_error("not ours");
  } catch (const std::exception& e) {
    EXPECT_FALSE(agreedFailure(e));
  }
  EXPECT_FALSE(agreedFailure(std::exception_ptr()));
}
