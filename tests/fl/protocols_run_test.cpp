// The server optimizers and the evaluation rules end to end on one rank (Communicator::single()):
// tiny FashionMNIST runs (4 clients x 200 samples, MLP). The server step of round 0 is checked
// against FedOpt's formula applied to plain FedAvg's (or q-FFL's, FedFa's) aggregate of the same
// clients; the selection against the per-round records; fedbabu.head against what must stay frozen.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "app/config_parser.hpp"
#include "comm/communicator.hpp"
#include "fl/algorithms/fedbabu.hpp"
#include "fl/experiment.hpp"
#include "support/null_sink.hpp"

namespace fedsilo {
namespace {

ExperimentConfig tinyConfig(const std::string& algorithm, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"--algorithm", algorithm, "--dataset", "fashion_mnist", "--model", "mlp",
                                "--model.hidden", "32,16", "--clients", "4", "--rounds", "3", "--seed", "3",
                                "--partition.samples_per_client", "200", "--train.batch", "32",
                                "--train.lr", "0.05", "--data.split", "0.6,0.2,0.2", "--output", "/tmp/unused.h5"};
  args.insert(args.end(), extra.begin(), extra.end());  // a later occurrence overrides
  return parseArguments(args).config;
}

struct TinyRun {
  ExperimentConfig cfg;
  Communicator comm = Communicator::single();
  std::unique_ptr<Experiment> exp;
  std::vector<float> init;
  test::MemorySink sink;
  explicit TinyRun(ExperimentConfig c) : cfg(std::move(c)) {
    exp = std::make_unique<Experiment>(cfg, comm);
    init = exp->global();
    exp->run(sink);
    exp->writeFinal(sink);
  }
  const FlContext& ctx() const { return exp->context(); }
  const std::vector<double>& summary(const std::string& name) const { return sink.values.at("/summary/" + name); }
  double summaryScalar(const std::string& name) const { return summary(name).at(0); }
  const std::vector<std::vector<double>>& rows(const std::string& name) const { return sink.rows.at(name); }
};

bool same(const std::vector<float>& a, const std::vector<float>& b, Index off, Index n) {
  return std::memcmp(a.data() + off, b.data() + off, static_cast<std::size_t>(n) * sizeof(float)) == 0;
}

// Adam's first step from m = 0, v = tau^2 (Reddi et al., Algorithm 2) on Delta = aggregate - w.
float adamFirstStep(float w, float aggregate, const ServerOptimizerConfig& o) {
  const double delta = static_cast<double>(aggregate) - w;
  const double m = (1 - o.beta1) * delta, v = o.beta2 * o.tau * o.tau + (1 - o.beta2) * delta * delta;
  return static_cast<float>(w + o.lr * m / (std::sqrt(v) + o.tau));
}

// Round 0 of `algorithm` with the adam server optimizer against the same round without one: the
// aggregate w1 is what the plain run sets, so adam's global must be adamFirstStep(w0, w1) (to the
// rounding of w1 to float; blocks the plain run did not move must not move either).
void expectAdamOnTheAggregate(const std::string& algorithm, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> oneRound{"--rounds", "1"};
  oneRound.insert(oneRound.end(), extra.begin(), extra.end());
  TinyRun plain(tinyConfig(algorithm, oneRound));
  std::vector<std::string> adam = oneRound;
  adam.insert(adam.end(), {"--fl.server_optimizer", "adam", "--fl.server_lr", "0.01", "--fl.server_tau", "0.01"});
  TinyRun opt(tinyConfig(algorithm, adam));
  const ServerOptimizerConfig& o = opt.cfg.fl.serverOptimizer;
  ASSERT_EQ(plain.init, opt.init);
  double moved = 0.0;
  for (std::size_t i = 0; i < opt.init.size(); ++i) {
    const float w0 = opt.init[i], w1 = plain.exp->global()[i];
    if (w1 == w0) {
      EXPECT_EQ(opt.exp->global()[i], w0) << algorithm << ": parameter " << i << " is not aggregated";
      continue;
    }
    EXPECT_NEAR(opt.exp->global()[i], adamFirstStep(w0, w1, o), 2e-6) << algorithm << ": parameter " << i;
    moved += std::fabs(opt.exp->global()[i] - w0);
  }
  EXPECT_GT(moved, 0.0) << algorithm;
}

TEST(ServerOptimizerRun, AdamStepsOnFedAvgsWeightedMean) { expectAdamOnTheAggregate("fedavg"); }
TEST(ServerOptimizerRun, AdamStepsOnQFflsAggregate) { expectAdamOnTheAggregate("qffl"); }
TEST(ServerOptimizerRun, AdamStepsOnFedFasAggregate) { expectAdamOnTheAggregate("fedfa"); }
TEST(ServerOptimizerRun, AdamStepsOnPlayerFlsFederatedBlocksOnly) { expectAdamOnTheAggregate("playerfl"); }
TEST(ServerOptimizerRun, AdamStepsOnFedBabusBodyOnly) { expectAdamOnTheAggregate("fedbabu"); }
TEST(ServerOptimizerRun, AdamStepsOnFedProxsWeightedMean) { expectAdamOnTheAggregate("fedprox"); }
TEST(ServerOptimizerRun, AdamStepsOnFedLpsUploadedBlocksOnly) { expectAdamOnTheAggregate("fedlp"); }
TEST(ServerOptimizerRun, AdamStepsOnDittosGlobalModel) { expectAdamOnTheAggregate("ditto"); }
TEST(ServerOptimizerRun, AdamStepsOnAlphaFedAvgsFairMean) { expectAdamOnTheAggregate("alpha_fedavg"); }
// Under client-level DP FedFa builds its aggregate from the noised mean with its own server lr; the
// optimizer must step on that aggregate (as without DP), not on the mean before FedFa's step.
TEST(ServerOptimizerRun, AdamStepsOnFedFasPrivateAggregate) {
  expectAdamOnTheAggregate("fedfa", {"--privacy.level", "client", "--privacy.noise_multiplier", "0.5",
                                     "--privacy.clip", "0.5", "--fedfa.server_lr", "0.5"});
}

TEST(ServerOptimizerRun, MomentumWithoutMomentumIsFedAvg) {
  TinyRun plain(tinyConfig("fedavg"));
  TinyRun opt(tinyConfig("fedavg", {"--fl.server_optimizer", "momentum", "--fl.server_momentum", "0"}));
  ASSERT_EQ(plain.exp->global().size(), opt.exp->global().size());
  for (std::size_t i = 0; i < plain.exp->global().size(); ++i)
    EXPECT_NEAR(opt.exp->global()[i], plain.exp->global()[i], 1e-5) << i;
}

TEST(ServerOptimizerRun, LaterRoundsUseTheMoments) {
  // With momentum the second step is not the plain mean of round 1: m carries round 0's Delta.
  TinyRun plain(tinyConfig("fedavg", {"--rounds", "2"}));
  TinyRun opt(tinyConfig("fedavg", {"--rounds", "2", "--fl.server_optimizer", "momentum", "--fl.server_momentum",
                                    "0.9"}));
  double diff = 0.0;
  for (std::size_t i = 0; i < plain.exp->global().size(); ++i)
    diff = std::max(diff, static_cast<double>(std::fabs(opt.exp->global()[i] - plain.exp->global()[i])));
  EXPECT_GT(diff, 1e-4);
}

// ---- evaluation rules --------------------------------------------------------------------------

// The round whose validation score is the best (earliest on ties) among rounds 0..T-1 of `rows`.
int bestRound(const std::vector<std::vector<double>>& rows, int client, bool higherIsBetter) {
  int best = -1;
  for (std::size_t t = 0; t < rows.size(); ++t) {
    const double v = rows[t][static_cast<std::size_t>(client)];
    if (best < 0) {
      best = static_cast<int>(t);
      continue;
    }
    const double b = rows[static_cast<std::size_t>(best)][static_cast<std::size_t>(client)];
    if (higherIsBetter ? v > b : v < b) best = static_cast<int>(t);
  }
  return best;
}

TEST(EvalRulesRun, BestValidationAccuracySelectsThatRoundsFigures) {
  TinyRun r(tinyConfig("fedavg", {"--rounds", "5", "--train.lr", "0.2", "--eval.select", "best_val"}));
  const auto& val = r.rows("client_val_accuracy");
  const auto& acc = r.rows("client_accuracy");
  const auto& loss = r.rows("client_loss");
  ASSERT_EQ(val.size(), 5u);
  int notLast = 0;
  for (int k = 0; k < 4; ++k) {
    const int t = bestRound(val, k, true);
    const auto kk = static_cast<std::size_t>(k);
    EXPECT_EQ(r.summary("selected_round")[kk], t) << "client " << k;
    EXPECT_EQ(r.summary("client_accuracy")[kk], acc[static_cast<std::size_t>(t)][kk]);
    EXPECT_EQ(r.summary("client_loss")[kk], loss[static_cast<std::size_t>(t)][kk]);
    EXPECT_EQ(r.summary("client_val_accuracy")[kk], val[static_cast<std::size_t>(t)][kk]);
    notLast += t != 4;
  }
  EXPECT_GT(notLast, 0) << "every client's best round is the last one: the test shows nothing";
}

TEST(EvalRulesRun, BestValidationLossUsesTheLoss) {
  TinyRun r(tinyConfig("local", {"--rounds", "5", "--train.lr", "0.3", "--eval.select", "best_val",
                                 "--eval.select_metric", "loss"}));
  for (int k = 0; k < 4; ++k)
    EXPECT_EQ(r.summary("selected_round")[static_cast<std::size_t>(k)], bestRound(r.rows("client_val_loss"), k, false));
}

TEST(EvalRulesRun, FinalSelectsTheLastRoundAndRecordsValidationEveryEvaluatedRound) {
  TinyRun r(tinyConfig("fedavg", {"--rounds", "3", "--eval.every", "2"}));
  for (int k = 0; k < 4; ++k) EXPECT_EQ(r.summary("selected_round")[static_cast<std::size_t>(k)], 2);
  const auto& val = r.rows("client_val_accuracy");
  ASSERT_EQ(val.size(), 3u);
  for (int k = 0; k < 4; ++k) {
    EXPECT_TRUE(std::isfinite(val[0][static_cast<std::size_t>(k)]));
    EXPECT_TRUE(std::isnan(val[1][static_cast<std::size_t>(k)])) << "round 1 was not evaluated";
    EXPECT_TRUE(std::isfinite(val[2][static_cast<std::size_t>(k)]));
  }
  EXPECT_EQ(r.summary("client_accuracy"), r.rows("client_accuracy")[2]);
}

TEST(EvalRulesRun, AfterLocalEvaluatesTheTrainedModelsBeforeTheServerStep) {
  // For `local` the server step changes nothing: both points see the same models.
  TinyRun localAgg(tinyConfig("local"));
  TinyRun localAfter(tinyConfig("local", {"--eval.point", "after_local"}));
  EXPECT_EQ(localAgg.rows("client_accuracy"), localAfter.rows("client_accuracy"));
  EXPECT_EQ(localAgg.rows("client_val_loss"), localAfter.rows("client_val_loss"));
  // For fedavg they differ (the trained local models, not the average), while training is unchanged.
  TinyRun agg(tinyConfig("fedavg"));
  TinyRun after(tinyConfig("fedavg", {"--eval.point", "after_local"}));
  EXPECT_EQ(agg.exp->global(), after.exp->global());
  EXPECT_NE(agg.rows("client_accuracy")[0], after.rows("client_accuracy")[0]);
  // Without an end-of-training step the summary is the last round's after-local evaluation.
  EXPECT_EQ(after.summary("client_accuracy"), after.rows("client_accuracy").back());
}

TEST(EvalRulesRun, AfterLocalKeepsFedBabusFineTunedModelsAsTheLastCandidate) {
  TinyRun r(tinyConfig("fedbabu", {"--eval.point", "after_local"}));
  // The summary is the end-of-training evaluation (fine-tuned heads), not round 2's after-local one.
  EXPECT_NE(r.summary("client_accuracy"), r.rows("client_accuracy").back());
  EXPECT_EQ(r.summary("client_accuracy"), r.exp->lastClientAccuracy());
  for (int k = 0; k < 4; ++k) EXPECT_EQ(r.summary("selected_round")[static_cast<std::size_t>(k)], 2);
}

TEST(EvalRulesRun, ClientWeightingSamplesWeighsTheMeanByTrainingSize) {
  TinyRun uniform(tinyConfig("local", {"--partition.samples_per_client", "0", "--partition.alpha", "0.3",
                                       "--data.split", "0.02,0.01,0.97"}));
  TinyRun bySamples(tinyConfig("local", {"--partition.samples_per_client", "0", "--partition.alpha", "0.3",
                                         "--data.split", "0.02,0.01,0.97", "--eval.client_weighting", "samples"}));
  const std::vector<double>& a = bySamples.summary("client_accuracy");
  EXPECT_EQ(uniform.summary("client_accuracy"), a);
  double num = 0.0, den = 0.0, plain = 0.0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const double n = static_cast<double>(bySamples.ctx().clients[k].numTrain());
    num += n * a[k];
    den += n;
    plain += a[k] / static_cast<double>(a.size());
  }
  EXPECT_NEAR(bySamples.summaryScalar("mean"), num / den, 1e-12);
  EXPECT_NEAR(uniform.summaryScalar("mean"), plain, 1e-12);
  EXPECT_GT(std::fabs(num / den - plain), 1e-6) << "equal-sized clients: the test shows nothing";
}

// eval.global = end leaves out the per-round test-set pass over the global model and nothing else:
// training, the clients' figures and the summary equal those of eval.global = rounds.
TEST(EvalRulesRun, GlobalAtTheEndOnlyEvaluatesTheGlobalModelInTheLastRound) {
  TinyRun rounds(tinyConfig("fedavg", {"--eval.select", "best_val", "--eval.point", "after_local"}));
  TinyRun end(tinyConfig("fedavg", {"--eval.select", "best_val", "--eval.point", "after_local", "--eval.global",
                                    "end"}));
  EXPECT_EQ(rounds.exp->global(), end.exp->global());
  for (const char* row : {"client_accuracy", "client_loss", "client_val_accuracy", "client_val_loss"})
    EXPECT_EQ(rounds.rows(row), end.rows(row)) << row;
  for (const char* name : {"client_accuracy", "selected_round", "mean", "global_accuracy", "global_loss"})
    EXPECT_EQ(rounds.summary(name), end.summary(name)) << name;
  for (const char* name : {"global_accuracy", "global_loss"}) {
    const std::vector<double>& all = rounds.sink.scalars.at(name);
    const std::vector<double>& last = end.sink.scalars.at(name);
    ASSERT_EQ(all.size(), 3u);
    ASSERT_EQ(last.size(), 3u);
    for (std::size_t t = 0; t < 2; ++t) {
      EXPECT_TRUE(std::isfinite(all[t])) << name << " round " << t;
      EXPECT_TRUE(std::isnan(last[t])) << name << " round " << t << ": evaluated with eval.global = end";
    }
    EXPECT_EQ(all[2], last[2]) << name << " in the last round";
  }
}

// ---- fedbabu.head --------------------------------------------------------------------------------

TEST(FedBabuHeadRun, NamedTrailingBlocksStayFrozenAndUnaveraged) {
  TinyRun r(tinyConfig("fedbabu", {"--fedbabu.head", "fc2,fc3"}));
  const std::vector<LayerBlock>& b = r.ctx().blocks;
  ASSERT_EQ(b.size(), 3u);
  const Index headStart = b[1].offset, P = r.ctx().numParams;
  EXPECT_TRUE(same(r.exp->global(), r.init, headStart, P - headStart)) << "fc2 and fc3 never trained nor averaged";
  EXPECT_FALSE(same(r.exp->global(), r.init, 0, headStart)) << "fc1 (the body) trained and averaged";
}

TEST(FedBabuHeadRun, LastBlockByNameIsTheDefault) {
  TinyRun byDefault(tinyConfig("fedbabu"));
  TinyRun named(tinyConfig("fedbabu", {"--fedbabu.head", "fc3"}));
  EXPECT_EQ(byDefault.exp->global(), named.exp->global());
  EXPECT_EQ(byDefault.summary("client_accuracy"), named.summary("client_accuracy"));
}

TEST(FedBabuHead, MustBeTheModelsLastBlocksAndLeaveABody) {
  std::vector<LayerBlock> blocks(3);
  blocks[0].name = "fc1";
  blocks[1].name = "fc2";
  blocks[2].name = "fc3";
  EXPECT_EQ(fedBabuHeadStart({}, blocks, "mlp"), 2);
  EXPECT_EQ(fedBabuHeadStart({"fc3", "fc2"}, blocks, "mlp"), 1);
  const auto message = [&](const std::vector<std::string>& head) {
    try {
      fedBabuHeadStart(head, blocks, "mlp");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({"fc2"}).find("the head must be the model's last blocks"), std::string::npos) << message({"fc2"});
  EXPECT_NE(message({"fc9"}).find("no layer block 'fc9'; model = mlp has blocks fc1, fc2, fc3"), std::string::npos)
      << message({"fc9"});
  EXPECT_NE(message({"fc1", "fc2", "fc3"}).find("needs a body"), std::string::npos);
}

}  // namespace
}  // namespace fedsilo
