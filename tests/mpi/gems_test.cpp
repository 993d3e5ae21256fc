// GEMS and the one-shot baselines are rank-invariant: the distributed run (1, 2 or 4 ranks) gives the
// same good-enough balls, the same aggregate, the same fine-tuning sweep and the same per-client
// accuracies as a single-process run (Communicator::single(), all clients local) of the same config
// on every rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "comm/communicator.hpp"
#include "fl/experiment.hpp"
#include "fl/algorithms/gems.hpp"
#include "app/config_parser.hpp"
#include "nn/presets.hpp"
#include "support/world_vs_single.hpp"

using namespace fedsilo;

namespace {

struct Case {
  const char* name;
  std::vector<std::string> args;
};

ExperimentConfig makeConfig(const Case& c) {
  // Defaults, overridden by the case's own "--key value" pairs.
  std::map<std::string, std::string> o{
      {"--clients", "5"}, {"--partition.scheme", "labels"}, {"--partition.samples_per_client", "150"},
      {"--data.split", "0.6,0.2,0.2"}, {"--train.batch", "16"}, {"--eval.batch", "100"},
      {"--gems.local_epochs", "2"}, {"--gems.samples", "15"}, {"--gems.r_max", "200"}, {"--gems.tol", "1"},
      {"--gems.epsilon", "0.6"}, {"--gems.finetune_sizes", "0,20,60"}, {"--gems.public_samples", "30"},
      {"--gems.finetune_epochs", "2"}, {"--gems.intersect_steps", "2000"}};
  for (std::size_t i = 0; i + 1 < c.args.size(); i += 2) o[c.args[i]] = c.args[i + 1];
  std::vector<std::string> a;
  for (const auto& [k, v] : o) {
    a.push_back(k);
    a.push_back(v);
  }
  return parseArguments(a).config;
}

const Case kCases[] = {
    {"gems_sphere", {"--algorithm", "gems", "--model", "logreg", "--rounds", "1"}},
    {"gems_ellipsoid", {"--algorithm", "gems", "--model", "logreg", "--rounds", "1", "--gems.shape", "ellipsoid",
                        "--gems.fisher_samples", "30", "--gems.fisher_prop", "0.5"}},
    {"gems_last_layer", {"--algorithm", "gems", "--model", "mlp", "--model.hidden", "6,5", "--rounds", "1", "--gems.epsilon", "0.3",
                         "--gems.local_epochs", "10"}},
    {"gems_neuron", {"--algorithm", "gems", "--model", "mlp", "--model.hidden", "6", "--rounds", "2", "--gems.clusters",
                     "8", "--gems.neuron_tol", "5", "--gems.neuron_epsilon", "0.05", "--gems.head_epochs", "2"}},
    {"average", {"--algorithm", "average", "--model", "logreg", "--rounds", "1"}},
    {"ensemble", {"--algorithm", "ensemble", "--model", "mlp", "--model.hidden", "6", "--rounds", "1"}},
    {"oneshot_local", {"--algorithm", "oneshot_local", "--model", "logreg", "--rounds", "1"}},
    {"global", {"--algorithm", "global", "--model", "logreg", "--rounds", "1"}},
    {"global_serial", {"--algorithm", "global", "--model", "logreg", "--rounds", "1", "--gems.global_shard", "0"}},
    // data-parallel with dropout and shards that do not divide the batch (16 = 3 + 3 + 3 + 3 + 3 + 1)
    {"global_dropout", {"--algorithm", "global", "--model", "mlp", "--model.hidden", "8", "--model.dropout", "0.3",
                        "--rounds", "1", "--gems.global_shard", "3"}},
    {"public_only", {"--algorithm", "public_only", "--model", "logreg", "--rounds", "1"}},
    // every client's local model from its own draw (the GEMS authors' protocol)
    {"gems_neuron_independent", {"--algorithm", "gems", "--model", "mlp", "--model.hidden", "6", "--rounds", "2",
                                 "--gems.clusters", "8", "--gems.neuron_tol", "5", "--gems.neuron_epsilon", "0.05",
                                 "--gems.head_epochs", "2", "--gems.init", "independent"}},
    {"average_independent", {"--algorithm", "average", "--model", "mlp", "--model.hidden", "6", "--rounds", "1",
                             "--gems.init", "independent"}},
    // the GEMS authors' fine-tuning recipe: Adam at lr 0.01, local training left as it is
    {"gems_neuron_adam_finetune", {"--algorithm", "gems", "--model", "mlp", "--model.hidden", "6", "--rounds", "2",
                                   "--gems.clusters", "8", "--gems.neuron_tol", "5", "--gems.neuron_epsilon", "0.05",
                                   "--gems.head_epochs", "2", "--gems.finetune_optimizer", "adam",
                                   "--gems.finetune_lr", "0.01"}},
};

}  // namespace

class GemsInvariance : public ::testing::TestWithParam<Case> {};

TEST_P(GemsInvariance, DistributedRunEqualsSingleProcessRun) {
  const test::WorldAndSingle runs = test::runOnWorldAndAlone(makeConfig(GetParam()));
  // Every record bit for bit (NaN matches NaN): the balls, the aggregate, the sweep, the accuracies.
  EXPECT_TRUE(test::identicalRecords(runs.world, runs.single));
  const test::RunRecords& b = runs.single;
  // The sweep and the per-client figures exist and are accuracies.
  const std::vector<double>& sweep = b.datasets.at("/gems/finetune/accuracy");
  ASSERT_EQ(sweep.size(), 3u);
  for (double s : sweep) EXPECT_TRUE(s >= 0.0 && s <= 1.0) << s;
  ASSERT_EQ(b.datasets.at("/gems/client_accuracy").size(), 5u);
  for (double s : b.datasets.at("/gems/client_accuracy")) EXPECT_TRUE(s >= 0.0 && s <= 1.0) << s;
  const std::string name = GetParam().name;
  if (name.rfind("gems", 0) == 0) {
    ASSERT_EQ(b.datasets.at("/gems/radius").size(), 5u);
    double maxR = 0.0;
    for (double r : b.datasets.at("/gems/radius")) maxR = std::max(maxR, r);
    EXPECT_GT(maxR, 0.0) << "every ball collapsed: the test config no longer exercises the search";
    if (name.rfind("gems_neuron", 0) == 0) {
      const double width = b.datasets.at("/gems/hidden_width").at(0);
      EXPECT_GE(width, 1.0);
      EXPECT_LE(width, 30.0);  // at most K * L neurons
      EXPECT_EQ(b.datasets.at("/gems/neuron/radius").size(), 30u);
      EXPECT_EQ(b.datasets.at("/gems/model").size(), static_cast<std::size_t>(width * (784 + 1) + (width + 1) * 10));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(OneShot, GemsInvariance, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

// gems.finetune_optimizer changes the fine-tuning and nothing before it: the sweep's entry without
// public samples (size 0) is the same under sgd and adam, the fine-tuned models are not.
TEST(GemsFinetune, OptimizerOptionChangesOnlyTheFineTunedModels) {
  const auto run = [](const char* optimizer) {
    return test::runOnWorldAndAlone(makeConfig({"ft", {"--algorithm", "average", "--model", "mlp", "--model.hidden", "6",
                                                       "--rounds", "1", "--gems.finetune_optimizer", optimizer,
                                                       "--gems.finetune_lr", "0.01"}}))
        .single;
  };
  const test::RunRecords sgd = run("sgd"), adam = run("adam");
  const std::vector<double>& sweepSgd = sgd.datasets.at("/gems/finetune/accuracy");
  const std::vector<double>& sweepAdam = adam.datasets.at("/gems/finetune/accuracy");
  ASSERT_EQ(sweepSgd.size(), 3u);
  ASSERT_EQ(sweepAdam.size(), 3u);
  EXPECT_EQ(sweepSgd[0], sweepAdam[0]);
  // the final model, fine-tuned on gems.public_samples
  EXPECT_NE(sgd.datasets.at("/model/global"), adam.datasets.at("/model/global"));
}

// gems.init: with no local training the naive average is the mean of where the local models start:
// the experiment's initial model (shared), or the mean of the clients' own draws
// Rng(seed, k, -1, Init) (independent), whatever the rank count.
TEST(GemsInit, LocalModelsStartFromTheSharedModelOrFromEachClientsOwnDraw) {
  Communicator world = Communicator::world();
  const auto start = [](std::int64_t client) {
    ModelConfig mc;
    mc.name = ModelPreset::Mlp;
    mc.hidden = {6};
    auto m = buildModel<float>(mc, InputSpec{Shape{1, 28, 28}, 10, 0});
    Rng rng(7, client, -1, Purpose::Init);
    m->initialize(rng);
    return std::vector<float>(m->params(), m->params() + m->numParams());
  };
  for (const char* init : {"shared", "independent"}) {
    const ExperimentConfig cfg = makeConfig({"init", {"--algorithm", "average", "--model", "mlp", "--model.hidden", "6",
                                                      "--rounds", "1", "--seed", "7", "--gems.local_epochs", "0",
                                                      "--gems.public_samples", "0", "--gems.init", init}});
    const test::RunRecords o = test::runAndGather(cfg, world);
    const std::vector<float> shared = start(-1);
    ASSERT_EQ(o.global.size(), shared.size());
    std::vector<double> expect(shared.begin(), shared.end());
    if (std::string(init) == "independent") {
      std::fill(expect.begin(), expect.end(), 0.0);
      for (int k = 0; k < cfg.clients; ++k) {
        const std::vector<float> own = start(k);
        for (std::size_t i = 0; i < own.size(); ++i) expect[i] += own[i] / static_cast<double>(cfg.clients);
      }
    }
    double maxDiff = 0.0, maxMove = 0.0;
    for (std::size_t i = 0; i < expect.size(); ++i) {
      maxDiff = std::max(maxDiff, std::abs(o.global[i] - expect[i]));
      maxMove = std::max(maxMove, std::abs(static_cast<double>(o.global[i]) - shared[i]));
    }
    EXPECT_LT(maxDiff, 1e-6) << "gems.init = " << init;
    if (std::string(init) == "independent") {
      EXPECT_GT(maxMove, 1e-3) << "the clients' draws equal the shared model";
    }
  }
}
