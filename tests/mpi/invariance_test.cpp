// Rank invariance: the same config at 1, 2 and 4 ranks gives identical per-client accuracies and
// the same global model. Each rank also runs the same experiment alone (Communicator::single(), all
// clients local) and the distributed run must match it exactly.
#include <gtest/gtest.h>

#include <cmath>

#include "comm/communicator.hpp"
#include "fl/experiment.hpp"
#include "app/config_parser.hpp"
#include "support/null_sink.hpp"

using namespace fedsilo;

namespace {

ExperimentConfig smallConfig(const std::string& algorithm) {
  ExperimentConfig c = parseArguments({"--algorithm", algorithm, "--clients", "6", "--rounds", "3",
                                       "--model.hidden", "32", "--partition.samples_per_client", "150",
                                       "--partition.alpha", "0.3", "--fl.clients_per_round", "4",
                                       "--train.batch", "16", "--eval.batch", "100"})
                           .config;
  return c;
}

struct Outcome {
  std::vector<double> clientAcc;  // all K clients (gathered)
  std::vector<float> global;
  std::vector<double> weights;    // last round, all clients
};

Outcome run(const ExperimentConfig& cfg, const Communicator& comm) {
  Experiment exp(cfg, comm);
  test::MemorySink sink;
  exp.run(sink);
  Outcome o;
  o.clientAcc = comm.allgatherv(exp.lastClientAccuracy());
  o.global = exp.global();
  o.weights = comm.allgatherv(sink.rows.at("weight").back());
  return o;
}

}  // namespace

class Invariance : public ::testing::TestWithParam<const char*> {};

TEST_P(Invariance, DistributedRunEqualsSingleProcessRun) {
  const ExperimentConfig cfg = smallConfig(GetParam());
  Communicator world = Communicator::world();
  Communicator single = Communicator::single();
  const Outcome a = run(cfg, world);
  const Outcome b = run(cfg, single);
  ASSERT_EQ(a.clientAcc.size(), 6u);
  ASSERT_EQ(b.clientAcc.size(), 6u);
  for (std::size_t k = 0; k < a.clientAcc.size(); ++k) EXPECT_EQ(a.clientAcc[k], b.clientAcc[k]) << "client " << k;
  ASSERT_EQ(a.global.size(), b.global.size());
  double maxDiff = 0.0;
  for (std::size_t i = 0; i < a.global.size(); ++i)
    maxDiff = std::max(maxDiff, static_cast<double>(std::fabs(a.global[i] - b.global[i])));
  EXPECT_LE(maxDiff, 1e-5);
  EXPECT_EQ(maxDiff, 0.0) << "exact reductions should make the models bit-identical";
  EXPECT_EQ(a.weights, b.weights);
  // Sanity: the experiment learned something and sampled 4 of 6 clients.
  int participants = 0;
  for (double w : a.weights) participants += w > 0 ? 1 : 0;
  if (std::string(GetParam()) != "local") EXPECT_EQ(participants, 4);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, Invariance, ::testing::Values("fedavg", "local"));
