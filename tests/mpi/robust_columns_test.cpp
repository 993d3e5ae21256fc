// Robust aggregation shared out by column blocks (fl/robust_columns.hpp), at 1, 2 and 4 ranks: the
// clients' updates spread over the ranks give, bit for bit, the blocks aggregated one after the other
// in one process (so every rank count gives the same), with attacks on; the coordinate-wise
// aggregators' result is the whole matrix's aggregate (robust/aggregator.hpp), bit for bit; and Krum,
// Multi-Krum, geomed, centered clipping and norm clipping, whose partial sums the ranks exchange, give the whole
// matrix's result computed in one process over the same blocks (robust/block_sums.hpp), bit for bit,
// Krum's selection and centered clipping's next centre included.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "comm/communicator.hpp"
#include "core/rng.hpp"
#include "fl/robust_columns.hpp"
#include "robust/block_sums.hpp"
#include "robust/column_blocks.hpp"

using namespace fedsilo;

namespace {

constexpr int kClients = 13;
constexpr std::size_t kCols = 1000, kWidth = 96;  // 11 blocks, the last one narrower

// Client k's update: N(0, 1) draws, or with `ties` rounded to quarters so that trimmed cuts tie.
std::vector<float> clientRow(int k, bool ties) {
  Rng rng(7, k, 0, Purpose::Misc);
  std::vector<float> row(kCols);
  for (float& x : row) {
    const double v = rng.normal();
    x = static_cast<float>(ties ? std::round(4.0 * v) / 4.0 : v);
  }
  return row;
}

double clientWeight(int k) { return 1.0 + k % 3; }

// Client k's update for Krum: with `twins`, each odd client sends its predecessor's row with one
// value moved by one float ulp, so that scores differ far below the Gram distances' error bound and
// Krum settles the cut by the direct distances (the second exchange).
std::vector<float> krumRow(int k, bool twins) {
  if (!twins || k % 2 == 0) return clientRow(k, false);
  std::vector<float> row = clientRow(k - 1, false);
  const std::size_t at = static_cast<std::size_t>(k) * 31u % kCols;
  row[at] = std::nextafter(row[at], std::numeric_limits<float>::infinity());
  return row;
}

// Centered clipping's centre: a last aggregate of n values.
std::vector<double> lastAggregate() {
  std::vector<double> c(kCols);
  for (std::size_t i = 0; i < kCols; ++i) c[i] = 0.1 * std::sin(static_cast<double>(i));
  return c;
}

bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expectSameBits(const std::vector<double>& a, const std::vector<double>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i)
    ASSERT_TRUE(sameBits(a[i], b[i])) << what << " " << i << ": " << a[i] << " vs " << b[i];
}

RobustConfig config(AggregatorKind aggregator, AttackKind attack) {
  RobustConfig cfg;
  cfg.aggregator.kind = aggregator;
  cfg.aggregator.trimFraction = 0.2;
  cfg.attack.kind = attack;
  cfg.attack.clientIds = {1, 4, 7};
  return cfg;
}

std::vector<char> maliciousClients() {
  std::vector<char> m(kClients, 0);
  m[1] = m[4] = m[7] = 1;
  return m;
}

AttackRound attackRound(const std::vector<char>& malicious) {
  AttackRound r;
  r.seed = 3;
  r.round = 2;
  for (int k = 0; k < kClients; ++k) {
    r.clients.push_back(k);
    r.malicious.push_back(malicious[static_cast<std::size_t>(k)]);
  }
  return r;
}

}  // namespace

TEST(RobustColumns, AlltoallvDeliversEachPieceInRankOrder) {
  Communicator comm = Communicator::world();
  const int P = comm.size(), r = comm.rank();
  std::vector<std::vector<int>> toRank(static_cast<std::size_t>(P));
  for (int d = 0; d < P; ++d)
    for (int i = 0; i < r + d; ++i) toRank[static_cast<std::size_t>(d)].push_back(1000 * r + 10 * d + i);
  std::vector<int> counts;
  const std::vector<int> got = comm.alltoallv(toRank, &counts);
  std::vector<int> expect;
  for (int s = 0; s < P; ++s) {
    EXPECT_EQ(counts[static_cast<std::size_t>(s)], s + r);
    for (int i = 0; i < s + r; ++i) expect.push_back(1000 * s + 10 * r + i);
  }
  EXPECT_EQ(got, expect);
}

TEST(RobustColumns, SharedOutBlocksEqualTheBlocksInOneProcessWithAttacks) {
  Communicator comm = Communicator::world();
  const std::vector<char> malicious = maliciousClients();
  // One share for every call, as each rank keeps its share round after round: the blocks a call left
  // must not change the next call's result.
  ColumnShare share;
  share.width = kWidth;
  for (bool ties : {false, true})
    for (AggregatorKind aggregator : {AggregatorKind::Mean, AggregatorKind::Median, AggregatorKind::TrimmedMean})
      for (AttackKind attack :
           {AttackKind::None, AttackKind::SignFlip, AttackKind::Scale, AttackKind::Alie, AttackKind::Ipm}) {
        SCOPED_TRACE(testing::Message() << "aggregator " << static_cast<int>(aggregator) << " attack "
                                        << static_cast<int>(attack) << " ties " << ties);
        const RobustConfig cfg = config(aggregator, attack);
        // Client k on rank k mod P, added in descending order: the result must not depend on either.
        for (int k = kClients - 1; k >= 0; --k)
          if (k % comm.size() == comm.rank()) share.add(k, clientWeight(k), clientRow(k, ties), comm.size());
        std::vector<double> center;
        const AggregatedRound got = aggregateByColumns(comm, cfg, 3, 2, malicious, 1, share, center);
        ASSERT_EQ(got.clients.size(), static_cast<std::size_t>(kClients));
        for (int k = 0; k < kClients; ++k) EXPECT_EQ(got.clients[static_cast<std::size_t>(k)], k);
        ASSERT_TRUE(got.aggregated);
        if (!comm.isRoot()) continue;

        UpdateMatrix whole(kClients, kCols);
        std::vector<double> weights;
        for (int k = 0; k < kClients; ++k) {
          const std::vector<float> row = clientRow(k, ties);
          std::copy(row.begin(), row.end(), whole.row(k));
          weights.push_back(clientWeight(k));
        }
        const AttackRound round = attackRound(malicious);
        const ColumnBlocks blocks{kCols, kWidth};
        std::vector<AggregateResult> perBlock;
        for (std::size_t b = 0; b < blocks.count(); ++b) {
          UpdateMatrix m(kClients, blocks.size(b));
          for (int k = 0; k < kClients; ++k) std::copy_n(whole.row(k) + blocks.begin(b), m.cols, m.row(k));
          perBlock.push_back(attackAndAggregateBlock(cfg, round, m, weights));
        }
        const AggregateResult serial = combineColumnBlocks(perBlock);
        expectSameBits(got.result.aggregate, serial.aggregate, "aggregate");
        expectSameBits(got.result.weight, serial.weight, "weight");
        EXPECT_EQ(got.result.selected, serial.selected);

        // The whole matrix at once: the same aggregate and choices; the weights up to rounding (the
        // trimmed mean's shares are averaged block by block).
        applyAttack(cfg.attack, round, whole);
        const std::vector<double> noCenter;
        const AggregateResult direct = aggregate(cfg.aggregator, AggregateInput{whole, weights, noCenter});
        expectSameBits(got.result.aggregate, direct.aggregate, "aggregate against the whole matrix");
        EXPECT_EQ(got.result.selected, direct.selected);
        for (int k = 0; k < kClients; ++k) {
          const double a = got.result.weight[static_cast<std::size_t>(k)],
                       b = direct.weight[static_cast<std::size_t>(k)];
          if (std::isnan(b))
            EXPECT_TRUE(std::isnan(a));
          else
            EXPECT_NEAR(a, b, 1e-14) << "weight of row " << k;
        }
      }
}

TEST(RobustColumns, TooFewUpdatesAreNotAggregated) {
  Communicator comm = Communicator::world();
  ColumnShare share;
  share.width = kWidth;
  if (comm.isRoot()) share.add(5, 1.0, clientRow(5, false), comm.size());
  std::vector<double> center;
  const AggregatedRound got = aggregateByColumns(comm, config(AggregatorKind::Median, AttackKind::None), 3, 0,
                                                 maliciousClients(), 2, share, center);
  EXPECT_EQ(got.clients, std::vector<int>{5});
  EXPECT_FALSE(got.aggregated);
}

TEST(RobustColumns, SummedBlocksEqualTheWholeMatrixInOneProcessBitForBit) {
  Communicator comm = Communicator::world();
  const std::vector<char> malicious = maliciousClients();
  // One share for every call, as each rank keeps its share round after round: the scratch buffers a
  // call with another aggregator, attack or block width left must not change the result.
  ColumnShare share;
  // 11 blocks of 96 columns, or 3 of 400 (at 4 ranks, one rank then holds none).
  for (std::size_t width : {kWidth, std::size_t{400}})
    for (bool twins : {false, true})
      for (AggregatorKind aggregator : {AggregatorKind::Krum, AggregatorKind::MultiKrum, AggregatorKind::Geomed,
                                        AggregatorKind::CenteredClip, AggregatorKind::NormClip})
        for (AttackKind attack : {AttackKind::None, AttackKind::SignFlip, AttackKind::Alie, AttackKind::Ipm}) {
          SCOPED_TRACE(testing::Message() << "aggregator " << static_cast<int>(aggregator) << " attack "
                                          << static_cast<int>(attack) << " twins " << twins << " width " << width);
          RobustConfig cfg = config(aggregator, attack);
          cfg.aggregator.byzantine = 3;
          cfg.aggregator.clipTau = 30.0;  // below most rows' distance to the centre (about 45): clipped
          cfg.aggregator.clipIterations = 3;
          cfg.aggregator.clipNorm = 32.0;  // about the rows' norms: some clipped, some not
          share.width = width;
          for (int k = kClients - 1; k >= 0; --k)
            if (k % comm.size() == comm.rank()) share.add(k, clientWeight(k), krumRow(k, twins), comm.size());
          std::vector<double> center = lastAggregate();
          const AggregatedRound got = aggregateByColumns(comm, cfg, 3, 2, malicious, 7, share, center);
          ASSERT_TRUE(got.aggregated);

          // Every rank: the whole matrix, attacked, in one process over the same blocks.
          UpdateMatrix whole(kClients, kCols);
          std::vector<double> weights;
          for (int k = 0; k < kClients; ++k) {
            const std::vector<float> row = krumRow(k, twins);
            std::copy(row.begin(), row.end(), whole.row(k));
            weights.push_back(clientWeight(k));
          }
          applyAttack(cfg.attack, attackRound(malicious), whole);
          const std::vector<double> last = lastAggregate();
          const AggregateResult direct =
              aggregateBySummedBlocks(cfg.aggregator, AggregateInput{whole, weights, last}, width);
          if (aggregator == AggregatorKind::CenteredClip) {  // this rank's columns of the next centre
            const auto [firstBlock, endBlock] = ColumnBlocks{kCols, width}.ofRank(comm.rank(), comm.size());
            for (std::size_t i = firstBlock * width; i < std::min(endBlock * width, kCols); ++i)
              ASSERT_TRUE(sameBits(center[i], direct.aggregate[i])) << "centre " << i;
          } else {
            expectSameBits(center, last, "the centre, untouched");
          }
          if (!comm.isRoot()) continue;
          expectSameBits(got.result.aggregate, direct.aggregate, "aggregate");
          expectSameBits(got.result.weight, direct.weight, "weight");
          EXPECT_EQ(got.result.selected, direct.selected);
          if (aggregator == AggregatorKind::CenteredClip) expectSameBits(center, direct.aggregate, "rank 0's centre");
        }
}
