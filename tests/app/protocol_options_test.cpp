// The protocol options: FedOpt's server optimizer (fl.server_*), the evaluation rules (eval.select,
// eval.select_metric, eval.point, eval.client_weighting) and fedbabu.head: defaults, parsing, the
// errors for bad values and for combinations an algorithm cannot take.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/config_parser.hpp"
#include "core/error.hpp"
#include "support/parse_error.hpp"

using namespace fedsilo;

TEST(ProtocolOptions, DefaultsChangeNothing) {
  const ExperimentConfig c = parseArguments({}).config;
  EXPECT_EQ(c.fl.serverOptimizer.kind, ServerOptimizerKind::None);
  EXPECT_EQ(c.fl.serverOptimizer.lr, 1.0);
  EXPECT_EQ(c.fl.serverOptimizer.momentum, 0.9);
  EXPECT_EQ(c.fl.serverOptimizer.beta1, 0.9);
  EXPECT_EQ(c.fl.serverOptimizer.beta2, 0.99);
  EXPECT_EQ(c.fl.serverOptimizer.tau, 1e-3);
  EXPECT_EQ(c.eval.select, EvalSelect::Final);
  EXPECT_EQ(c.eval.selectMetric, SelectMetric::Accuracy);
  EXPECT_EQ(c.eval.point, EvalPoint::AfterAggregation);
  EXPECT_EQ(c.eval.clientWeighting, ClientWeighting::Uniform);
  EXPECT_EQ(c.eval.global, GlobalEvaluation::Rounds);
  EXPECT_EQ(c.algo.getString("fedbabu.head"), "last");
}

TEST(ProtocolOptions, Parsed) {
  const ExperimentConfig c =
      parseArguments({"--fl.server_optimizer", "yogi", "--fl.server_lr", "0.03", "--fl.server_beta1", "0.5",
                      "--fl.server_beta2", "0.9", "--fl.server_tau", "1e-4",
                      "--eval.select", "best_val", "--eval.select_metric", "loss", "--eval.point", "after_local",
                      "--eval.client_weighting", "samples", "--eval.global", "end"})
          .config;
  EXPECT_EQ(c.fl.serverOptimizer.kind, ServerOptimizerKind::Yogi);
  EXPECT_EQ(c.fl.serverOptimizer.lr, 0.03);
  EXPECT_EQ(c.fl.serverOptimizer.beta1, 0.5);
  EXPECT_EQ(c.fl.serverOptimizer.beta2, 0.9);
  EXPECT_EQ(c.fl.serverOptimizer.tau, 1e-4);
  EXPECT_EQ(c.eval.select, EvalSelect::BestVal);
  EXPECT_EQ(c.eval.selectMetric, SelectMetric::Loss);
  EXPECT_EQ(c.eval.point, EvalPoint::AfterLocal);
  EXPECT_EQ(c.eval.clientWeighting, ClientWeighting::Samples);
  EXPECT_EQ(c.eval.global, GlobalEvaluation::End);
  for (const char* kind : {"none", "momentum", "adam", "yogi", "adagrad"})
    EXPECT_EQ(test::parseError({"--fl.server_optimizer", kind}), "") << kind;
}

TEST(ProtocolOptions, BadValuesNameTheOptionAndTheValue) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--fl.server_optimizer", "sgd"}, "fl.server_optimizer = sgd: expected one of none, momentum, adam, yogi"},
      {{"--fl.server_lr", "0"}, "fl.server_lr = 0"},
      {{"--fl.server_lr", "-1"}, "fl.server_lr = -1"},
      {{"--fl.server_momentum", "1"}, "fl.server_momentum = 1"},
      {{"--fl.server_beta1", "-0.1"}, "fl.server_beta1 = -0.1"},
      {{"--fl.server_beta2", "1.5"}, "fl.server_beta2 = 1.5"},
      {{"--fl.server_tau", "0"}, "fl.server_tau = 0"},
      {{"--fl.server_tau", "nan"}, "fl.server_tau"},
      {{"--eval.select", "best"}, "eval.select = best: expected one of final, best_val"},
      {{"--eval.select_metric", "f1"}, "eval.select_metric = f1: expected one of accuracy, loss"},
      {{"--eval.point", "before"}, "eval.point = before: expected one of after_aggregation, after_local"},
      {{"--eval.client_weighting", "tests"}, "eval.client_weighting = tests: expected one of uniform, samples"},
      {{"--eval.global", "never"}, "eval.global = never: expected one of rounds, end"},
      {{"--algorithm", "fedbabu", "--fedbabu.head", " "}, "fedbabu.head = ''"},
      {{"--algorithm", "fedbabu", "--fedbabu.head", "fc1,,fc2"}, "fedbabu.head = fc1,,fc2: an empty block name"},
  };
  for (const auto& [args, text] : cases) {
    const std::string e = test::parseError(args);
    EXPECT_NE(e.find(text), std::string::npos) << args[0] << " " << args[1] << ": got '" << e << "'";
  }
}

// An option changed where it has no effect is refused, naming it and the setting it needs; at its
// default (as text or as the same number) it passes.
TEST(ProtocolOptions, OptionsWithoutEffectAreRefused) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--fl.server_lr", "0.5"}, "fl.server_lr = 0.5: applies with a server optimizer (fl.server_optimizer) only"},
      {{"--fl.server_tau", "0.01"}, "fl.server_tau = 0.01: applies with fl.server_optimizer = adam, yogi or adagrad"},
      {{"--fl.server_optimizer", "adam", "--fl.server_momentum", "0.5"},
       "fl.server_momentum = 0.5: applies with fl.server_optimizer = momentum only"},
      {{"--fl.server_optimizer", "momentum", "--fl.server_beta1", "0.5"}, "fl.server_beta1 = 0.5: applies with"},
      {{"--fl.server_optimizer", "adagrad", "--fl.server_beta2", "0.9"},
       "fl.server_beta2 = 0.9: applies with fl.server_optimizer = adam or yogi only"},
      {{"--eval.select_metric", "loss"}, "eval.select_metric = loss: applies with eval.select = best_val only"},
  };
  for (const auto& [args, text] : cases) {
    const std::string e = test::parseError(args);
    EXPECT_NE(e.find(text), std::string::npos) << args[0] << " " << args[1] << ": got '" << e << "'";
  }
  EXPECT_EQ(test::parseError({"--fl.server_lr", "1.0", "--fl.server_tau", "1e-3"}), "");  // the defaults
  EXPECT_EQ(test::parseError({"--fl.server_optimizer", "adagrad", "--fl.server_beta1", "0.5", "--fl.server_tau", "0.1"}),
            "");
  EXPECT_EQ(test::parseError({"--eval.select", "best_val", "--eval.select_metric", "loss"}), "");
}

TEST(ProtocolOptions, AServerOptimizerNeedsAnAlgorithmThatAveragesModels) {
  for (const char* alg : {"fedavg", "fedprox", "fedlp", "fedbabu", "ditto", "alpha_fedavg", "qffl", "fedfa", "playerfl",
                          "playerfl_random"})
    EXPECT_EQ(test::parseError({"--algorithm", alg, "--fl.server_optimizer", "adam"}), "") << alg;
  for (const char* alg : {"local", "pfedme"}) {
    const std::string e = test::parseError({"--algorithm", alg, "--fl.server_optimizer", "adagrad"});
    EXPECT_NE(e.find(std::string("fl.server_optimizer = adagrad: algorithm = ") + alg), std::string::npos) << e;
    EXPECT_NE(e.find("applies to fedavg,"), std::string::npos) << e;
    EXPECT_EQ(e.find("applies to fedavg, local"), std::string::npos) << e;
  }
  const std::string gems = test::parseError({"--algorithm", "average", "--rounds", "1", "--fl.server_optimizer", "momentum"});
  EXPECT_NE(gems.find("fl.server_optimizer = momentum: algorithm = average"), std::string::npos) << gems;
}

TEST(ProtocolOptions, BestValNeedsValidationSamples) {
  const std::string e = test::parseError({"--eval.select", "best_val", "--data.split", "0.8,0,0.2"});
  EXPECT_NE(e.find("eval.select = best_val"), std::string::npos) << e;
  EXPECT_NE(e.find("data.split = 0.8,0,0.2"), std::string::npos) << e;
  EXPECT_EQ(test::parseError({"--eval.select", "final", "--data.split", "0.8,0,0.2"}), "");
}

TEST(ProtocolOptions, AfterLocalIsRefusedForOneShotAlgorithms) {
  const std::string e = test::parseError({"--algorithm", "average", "--rounds", "1", "--eval.point", "after_local"});
  EXPECT_NE(e.find("eval.point = after_local: algorithm = average is one-shot"), std::string::npos) << e;
  EXPECT_EQ(test::parseError({"--algorithm", "average", "--rounds", "1", "--eval.select", "best_val"}), "");
}

TEST(ProtocolOptions, HelpDescribesThem) {
  const std::string help = parseArguments({"--help"}).text;
  for (const char* key : {"--fl.server_optimizer", "--fl.server_lr", "--fl.server_momentum", "--fl.server_beta1",
                          "--fl.server_beta2", "--fl.server_tau", "--eval.select ", "--eval.select_metric",
                          "--eval.point", "--eval.client_weighting", "--eval.global", "--fedbabu.head", "FedAdam", "best_val",
                          "after_local"})
    EXPECT_NE(help.find(key), std::string::npos) << key;
}
