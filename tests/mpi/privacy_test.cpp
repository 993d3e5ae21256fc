// Privacy at several ranks: each private configuration run distributed equals the same run in one
// process (Communicator::single()) bit for bit: the global model, every client's accuracy and the
// privacy records. Secure aggregation changes nothing but its own records: with dropouts (the recovery
// round) the run equals the same run without it. With distributed noise, a round nobody was sampled in
// still moves the global model by the whole noise, drawn by the server.
// At one rank the world is the single process and the comparison cannot fail, so this program is
// registered at 2 and 4 ranks only (the line below, read by tests/CMakeLists.txt).
// mpi ranks: 2 4
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "app/config_parser.hpp"
#include "comm/communicator.hpp"
#include "fl/experiment.hpp"
#include "privacy/client_dp.hpp"
#include "support/null_sink.hpp"

using namespace fedsilo;

namespace {

ExperimentConfig configOf(const std::vector<std::string>& extra) {
  std::vector<std::string> args{"--clients", "6", "--rounds", "3", "--model.hidden", "16",
                                "--partition.samples_per_client", "120", "--partition.alpha", "0.3",
                                "--fl.clients_per_round", "3", "--train.batch", "16", "--eval.batch", "100",
                                "--privacy.clip", "0.5"};
  args.insert(args.end(), extra.begin(), extra.end());
  return parseArguments(args).config;
}

struct Outcome {
  std::vector<double> clientAcc;  // all K clients (gathered)
  std::vector<float> global;
  std::vector<std::vector<double>> participated;  // per round, this rank's clients
  std::map<std::string, std::vector<double>> privacy;  // /privacy/* (replicated records)
};

Outcome run(const ExperimentConfig& cfg, const Communicator& comm) {
  Experiment exp(cfg, comm);
  test::MemorySink sink;
  exp.run(sink);
  exp.writeFinal(sink);
  Outcome o;
  o.clientAcc = comm.allgatherv(exp.lastClientAccuracy());
  o.global = exp.global();
  for (const auto& [path, values] : sink.values)
    if (path.rfind("/privacy/", 0) == 0 && path.find("secagg_seconds") == std::string::npos &&
        path != "/privacy/steps")  // per-client rows: this rank's share
      o.privacy[path] = values;
  return o;
}

void expectSame(const Outcome& a, const Outcome& b, const std::string& what) {
  ASSERT_EQ(a.clientAcc.size(), 6u);
  EXPECT_EQ(a.clientAcc, b.clientAcc) << what;
  ASSERT_EQ(a.global.size(), b.global.size());
  std::size_t differing = 0;
  for (std::size_t i = 0; i < a.global.size(); ++i) differing += a.global[i] != b.global[i];
  EXPECT_EQ(differing, 0u) << what << ": parameters of the global model differ";
}

struct Case {
  const char* name;
  std::vector<std::string> args;
};

const Case kCases[] = {
    {"client_server", {"--privacy.level", "client", "--privacy.noise_multiplier", "0.7"}},
    {"client_clients_secagg_dropout",
     {"--privacy.level", "client", "--privacy.noise_multiplier", "0.7", "--privacy.noise_placement", "clients",
      "--privacy.secure_aggregation", "true", "--fl.dropout", "0.3"}},
    {"client_adaptive", {"--privacy.level", "client", "--privacy.target_epsilon", "5", "--privacy.adaptive_clip", "true",
                         "--privacy.clip_count_std", "1"}},
    {"client_qffl", {"--algorithm", "qffl", "--privacy.level", "client", "--privacy.noise_multiplier", "0.7"}},
    {"client_fedfa", {"--algorithm", "fedfa", "--privacy.level", "client", "--privacy.noise_multiplier", "0.7"}},
    {"client_fedlp", {"--algorithm", "fedlp", "--privacy.level", "client", "--privacy.noise_multiplier", "0.7"}},
    {"sample_fedprox",
     {"--algorithm", "fedprox", "--privacy.level", "sample", "--privacy.target_epsilon", "3", "--model.dropout", "0.2"}},
    {"sample_secagg", {"--privacy.level", "sample", "--privacy.noise_multiplier", "1", "--privacy.secure_aggregation",
                       "true", "--fl.dropout", "0.3"}},
};

}  // namespace

class PrivacyInvariance : public ::testing::TestWithParam<Case> {};

TEST_P(PrivacyInvariance, DistributedRunEqualsSingleProcessRun) {
  const ExperimentConfig cfg = configOf(GetParam().args);
  Communicator world = Communicator::world();
  if (world.size() < 2) GTEST_SKIP() << "needs 2 or more ranks (at 1 the two runs are the same run)";
  Communicator single = Communicator::single();
  const Outcome a = run(cfg, world), b = run(cfg, single);
  expectSame(a, b, GetParam().name);
  ASSERT_TRUE(a.privacy.count("/privacy/epsilon") || a.privacy.count("/privacy/secagg_clients"));
  EXPECT_EQ(a.privacy, b.privacy);
  if (a.privacy.count("/privacy/epsilon")) {
    const std::vector<double>& eps = a.privacy.at("/privacy/epsilon");
    EXPECT_TRUE(std::isfinite(eps.back()) && eps.back() > 0.0) << "epsilon " << eps.back();
  }
}

INSTANTIATE_TEST_SUITE_P(Privacy, PrivacyInvariance, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

TEST(SecureAggregation, WithDropoutsTheRunEqualsTheRunWithoutIt) {
  Communicator world = Communicator::world();
  for (const char* dp : {"none", "client"}) {
    // Threshold 1: every round with a survivor is unmasked (with the default majority the protocol
    // aborts rounds that the run without secure aggregation aggregates).
    std::vector<std::string> base{"--fl.dropout", "0.3", "--privacy.level", dp};
    if (std::string(dp) == "client") base.insert(base.end(), {"--privacy.noise_multiplier", "0.7"});
    std::vector<std::string> secure = base;
    secure.insert(secure.end(), {"--privacy.secure_aggregation", "true", "--privacy.secagg_threshold", "1"});
    const Outcome plain = run(configOf(base), world), masked = run(configOf(secure), world);
    expectSame(plain, masked, std::string("level ") + dp);
    ASSERT_TRUE(masked.privacy.count("/privacy/secagg_dropped"));
    double dropped = 0.0;
    for (double d : masked.privacy.at("/privacy/secagg_dropped")) dropped += d;
    EXPECT_GT(dropped, 0.0) << "no client dropped: the recovery round was not exercised";
    if (std::string(dp) == "client") {
      EXPECT_EQ(plain.privacy.at("/privacy/epsilon"), masked.privacy.at("/privacy/epsilon"));
    }
  }
}

// Distributed noise, a round nobody was sampled in: the released model is not the previous one but
// moves by N(0, (z C / (q K))^2) on every coordinate, the server drawing the noise the absent clients
// did not add, from its keyed stream: the same bits at every rank count.
TEST(DistributedNoise, ARoundNobodyWasSampledInStillReleasesTheWholeNoise) {
  const int clients = 6;
  std::uint64_t seed = 0;
  while (!poissonSample(seed, 0, clients, 1.0 / clients).empty()) ++seed;  // q = 1/6: one seed in three
  const double z = 0.7, clip = 0.5;
  const ExperimentConfig cfg =
      parseArguments({"--clients", std::to_string(clients), "--rounds", "1", "--model.hidden", "16",
                      "--partition.samples_per_client", "120", "--fl.clients_per_round", "1", "--train.batch", "16",
                      "--eval.batch", "100", "--seed", std::to_string(seed), "--privacy.level", "client",
                      "--privacy.noise_multiplier", std::to_string(z), "--privacy.clip", std::to_string(clip),
                      "--privacy.noise_placement", "clients"})
          .config;
  std::vector<std::vector<float>> moves;
  const Communicator world = Communicator::world(), single = Communicator::single();
  for (const Communicator* comm : {&world, &single}) {
    Experiment exp(cfg, *comm);
    const std::vector<float> before = exp.global();
    test::MemorySink sink;
    exp.run(sink);
    std::vector<float> move(before.size());
    for (std::size_t i = 0; i < before.size(); ++i) move[i] = exp.global()[i] - before[i];
    moves.push_back(move);
  }
  EXPECT_EQ(moves[0], moves[1]) << "the server's noise depends on the rank count";
  const std::vector<float>& move = moves[0];
  double sumSq = 0.0, sum = 0.0;
  for (float m : move) {
    sum += m;
    sumSq += static_cast<double>(m) * m;
  }
  const double n = static_cast<double>(move.size()), mean = sum / n;
  const double std = std::sqrt(sumSq / n - mean * mean), expected = z * clip / 1.0;  // q K = 1
  // Over 12 730 parameters the sample standard deviation is within 4% (6 standard errors) of sigma.
  EXPECT_NEAR(std, expected, 0.04 * expected);
  EXPECT_NEAR(mean, 0.0, 6.0 * expected / std::sqrt(n));
}
