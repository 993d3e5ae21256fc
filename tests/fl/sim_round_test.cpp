// The round driver's step on the simulated clock (fl/sim_round.hpp) on its own, one rank: the seconds
// of each transfer and of the local training on hand-computed cases, a silo that misses the deadline,
// and the bytes each silo is charged.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/placement.hpp"
#include "compress/qsgd_codec.hpp"
#include "core/error.hpp"
#include "fl/compressed_upload.hpp"
#include "fl/sim_round.hpp"
#include "support/null_sink.hpp"
#include "support/two_blocks.hpp"

namespace fedsilo {
namespace {

DistributionSpec constant(double x) { return {DistributionKind::Constant, {x}, "constant"}; }

// Blocks fc1 (100 floats) and fc2 (10 floats), both federated.
const std::vector<LayerBlock>& twoBlocks() {
  static const std::vector<LayerBlock> blocks = test::twoBlocks();
  return blocks;
}

RoundPayload bothBlocks() {
  RoundPayload round;
  round.blocks = &twoBlocks();
  round.reduced = {1, 1};
  return round;
}

// Two silos at 1 GFLOP/s, uplink 8 Mbit/s (1e6 B/s), downlink 16 Mbit/s (2e6 B/s), 10 ms latency.
ExperimentConfig twoSilos() {
  ExperimentConfig cfg;
  cfg.clients = 2;
  cfg.system.computeGflops = constant(1.0);
  cfg.system.uplinkMbps = constant(8.0);
  cfg.system.downlinkMbps = constant(16.0);
  cfg.system.latencyMs = constant(10.0);
  return cfg;
}

constexpr double kFlopsPerSample = 1e6;
// Download: 110 floats, 440 bytes at 2e6 B/s + 10 ms. Upload: 110 floats and two float64 block weights,
// 456 bytes at 1e6 B/s + 10 ms.
constexpr double kDownload = 440.0 / 2e6 + 0.010;
constexpr double kUpload = 456.0 / 1e6 + 0.010;

TEST(SimRound, ChargesEachSiloItsHandComputedComputeAndTransferSeconds) {
  const ExperimentConfig cfg = twoSilos();
  const Communicator comm = Communicator::single();
  const Placement placement{2, 1};
  SimRound sim(cfg, comm, placement, kFlopsPerSample);
  ASSERT_TRUE(sim.clockOn());
  EXPECT_FALSE(sim.hasDeadline());
  const std::vector<double> weights{1.0, 1.0};
  sim.beginRound(0, bothBlocks());
  EXPECT_TRUE(sim.clientTrained(0, 500, &weights));   // 1e6 x 500 / 1e9 = 0.5 s
  EXPECT_TRUE(sim.clientTrained(1, 1500, &weights));  // 1.5 s
  sim.endRound();
  EXPECT_DOUBLE_EQ(sim.roundSeconds(), kDownload + 1.5 + kUpload);  // the slower silo
  EXPECT_DOUBLE_EQ(sim.simTime(), sim.roundSeconds());

  test::MemorySink sink;
  sim.recordRound(sink);
  EXPECT_EQ(sink.rows["client_upload_bytes"][0], (std::vector<double>{456.0, 456.0}));
  EXPECT_EQ(sink.rows["client_download_bytes"][0], (std::vector<double>{440.0, 440.0}));
  const std::vector<double>& compute = sink.rows["client_compute_seconds"][0];
  EXPECT_DOUBLE_EQ(compute[0], 0.5);
  EXPECT_DOUBLE_EQ(compute[1], 1.5);
  EXPECT_DOUBLE_EQ(sink.rows["client_download_seconds"][0][1], kDownload);
  EXPECT_DOUBLE_EQ(sink.rows["client_upload_seconds"][0][0], kUpload);

  // The clock runs on over rounds: a second round with one silo sending nothing (its update dropped)
  // lasts until that silo is done training.
  sim.beginRound(1, bothBlocks());
  EXPECT_TRUE(sim.clientTrained(0, 500, &weights));
  EXPECT_TRUE(sim.clientTrained(1, 3000, nullptr));
  sim.endRound();
  EXPECT_DOUBLE_EQ(sim.roundSeconds(), kDownload + 3.0);
  EXPECT_DOUBLE_EQ(sim.simTime(), kDownload + 1.5 + kUpload + kDownload + 3.0);
}

TEST(SimRound, ASiloPastTheDeadlineSendsNothingAndTheRoundLastsUntilTheDeadline) {
  ExperimentConfig cfg = twoSilos();
  cfg.system.deadlineSeconds = 1.0;
  const Communicator comm = Communicator::single();
  const Placement placement{2, 1};
  SimRound sim(cfg, comm, placement, kFlopsPerSample);
  ASSERT_TRUE(sim.hasDeadline());
  const std::vector<double> weights{1.0, 1.0};
  sim.beginRound(0, bothBlocks());
  EXPECT_TRUE(sim.clientTrained(0, 500, &weights));    // 0.52 s in all
  EXPECT_FALSE(sim.clientTrained(1, 1000, &weights));  // 1.0 s of compute alone: past 1.0 with transfers
  sim.endRound();
  EXPECT_DOUBLE_EQ(sim.roundSeconds(), 1.0);  // the server waits for the deadline

  test::MemorySink sink;
  sim.recordRound(sink);
  EXPECT_EQ(sink.rows["client_upload_bytes"][0], (std::vector<double>{456.0, 0.0}));
}

TEST(SimRound, WithoutTheSystemModelCountsBytesAndChargesTheEncodedSizes) {
  ExperimentConfig cfg;
  cfg.clients = 2;
  const Communicator comm = Communicator::single();
  const Placement placement{2, 1};
  SimRound sim(cfg, comm, placement, kFlopsPerSample);
  ASSERT_FALSE(sim.clockOn());
  const std::vector<double> weights{1.0, 0.0};  // fc1 only: 400 + 8 bytes
  sim.beginRound(0, bothBlocks());
  EXPECT_TRUE(sim.clientTrained(0, 500, &weights));
  EXPECT_TRUE(sim.clientTrained(1, 500, nullptr));
  EncodedRoundBytes encoded;
  encoded.upload = {120.0, 0.0};
  encoded.broadcast = 64.0;
  {
    test::MemorySink sink;
    sim.recordRound(sink);
    EXPECT_EQ(sink.rows["client_upload_bytes"][0], (std::vector<double>{408.0, 0.0}));
  }
  sim.chargeEncodedBytes(encoded, false);
  sim.endRound();
  EXPECT_TRUE(std::isnan(sim.roundSeconds()));
  test::MemorySink sink;
  sim.recordRound(sink);
  EXPECT_EQ(sink.rows["client_upload_bytes"][0], (std::vector<double>{120.0, 0.0}));
  EXPECT_EQ(sink.rows["client_download_bytes"][0], (std::vector<double>{440.0, 440.0}));
  EXPECT_EQ(sink.rows.count("sim_seconds"), 0u);
  EXPECT_EQ(sink.scalars.count("sim_seconds"), 0u);
  // With fl.compress_downlink every silo that took part downloads the encoded broadcast.
  sim.chargeEncodedBytes(encoded, true);
  test::MemorySink down;
  sim.recordRound(down);
  EXPECT_EQ(down.rows["client_download_bytes"][0], (std::vector<double>{64.0, 64.0}));
}

// qsgd at 3 bits over fc1 and fc2: the header, then per block its norm and 4-bit codes,
// 8 + (4 + 50) + (4 + 5) bytes.
constexpr double kQsgd3Bytes = 71.0;

TEST(SimRound, WithACodecTheClockChargesTheEncodedSizeAndItsDeadlineTest) {
  ExperimentConfig cfg = twoSilos();
  // Silo 0 trains 0.975 s: with its raw upload (0.010456 s) it would finish at 0.995676 s, past the
  // deadline; with the encoded one (0.010071 s) at 0.995291 s, within it.
  cfg.system.deadlineSeconds = 0.9955;
  const Communicator comm = Communicator::single();
  const Placement placement{2, 1};
  const QsgdCodec qsgd(3);
  const std::vector<double> weights{1.0, 1.0};
  {
    SimRound raw(cfg, comm, placement, kFlopsPerSample);
    raw.beginRound(0, bothBlocks());
    EXPECT_FALSE(raw.clientTrained(0, 975, &weights));
  }
  SimRound sim(cfg, comm, placement, kFlopsPerSample);
  RoundPayload payload = bothBlocks();
  payload.codec = &qsgd;
  sim.beginRound(0, payload);
  EXPECT_TRUE(sim.clientTrained(0, 975, &weights));
  EXPECT_TRUE(sim.clientTrained(1, 100, &weights));
  sim.endRound();
  const double upload = kQsgd3Bytes / 1e6 + 0.010;
  EXPECT_DOUBLE_EQ(sim.roundSeconds(), kDownload + 0.975 + upload);
  test::MemorySink sink;
  sim.recordRound(sink);
  EXPECT_EQ(sink.rows["client_upload_bytes"][0], (std::vector<double>{kQsgd3Bytes, kQsgd3Bytes}));
  EXPECT_EQ(sink.rows["client_download_bytes"][0], (std::vector<double>{440.0, 440.0}));
  EXPECT_DOUBLE_EQ(sink.rows["client_upload_seconds"][0][1], upload);

  // With fl.compress_downlink the broadcast is charged its encoded size too.
  payload.downlinkEncoded = true;
  sim.beginRound(1, payload);
  EXPECT_TRUE(sim.clientTrained(0, 100, &weights));
  test::MemorySink down;
  sim.recordRound(down);
  EXPECT_EQ(down.rows["client_download_bytes"][0][0], kQsgd3Bytes);
  EXPECT_DOUBLE_EQ(down.rows["client_download_seconds"][0][0], kQsgd3Bytes / 2e6 + 0.010);
}

TEST(SimRound, TheClockRunsWithEveryCodecButZfpsFixedAccuracy) {
  ExperimentConfig cfg = twoSilos();
  cfg.algorithm = "fedavg";
  cfg.compress.method = CompressMethod::Qsgd;
  EXPECT_NO_THROW(refuseUnsoundCompression(cfg));
  cfg.compress.method = CompressMethod::Zfp;
  EXPECT_NO_THROW(refuseUnsoundCompression(cfg));  // fixed rate: its size follows from the layout
  cfg.compress.tolerance = 1e-3;
  EXPECT_THROW(refuseUnsoundCompression(cfg), ConfigError);
  cfg.system = SystemConfig{};
  EXPECT_NO_THROW(refuseUnsoundCompression(cfg));
}

}  // namespace
}  // namespace fedsilo
