// Rank invariance of the protocol options (registered at 1, 2 and 4 ranks): FedOpt's server optimizers
// (their state lives on rank 0), the evaluation rules (best-validation selection per client, the
// after-local evaluation point, sample-weighted means, kept parameter snapshots, the global model
// evaluated at the end only) and fedbabu.head.
// Every rank also runs the same experiment alone (Communicator::single()); the distributed run must
// match it bit for bit: global model, per-round client rows, summary and selected rounds, and the
// clients' written models.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "app/config_parser.hpp"
#include "comm/communicator.hpp"
#include "fl/experiment.hpp"
#include "support/null_sink.hpp"

using namespace fedsilo;

namespace {

struct Case {
  const char* name;
  std::vector<std::string> args;
};

ExperimentConfig caseConfig(const Case& c) {
  std::vector<std::string> args{"--clients", "6", "--rounds", "4", "--model.hidden", "24,12",
                                "--partition.samples_per_client", "150", "--partition.alpha", "0.3",
                                "--train.batch", "16", "--train.lr", "0.1", "--eval.batch", "100",
                                "--data.split", "0.6,0.2,0.2"};
  args.insert(args.end(), c.args.begin(), c.args.end());
  return parseArguments(args).config;
}

// Records the client-model rows too (/model/clients), as float values.
class ModelSink : public test::MemorySink {
 public:
  void writeClientFloatRows(const std::string& path, const std::vector<float>& local, std::uint64_t) override {
    values[path].assign(local.begin(), local.end());
  }
};

struct Outcome {
  std::vector<float> global;
  std::map<std::string, std::vector<double>> gathered;  // all clients, by dataset
  std::vector<double> mean;
};

Outcome run(const ExperimentConfig& cfg, const Communicator& comm) {
  Experiment exp(cfg, comm);
  ModelSink sink;
  exp.run(sink);
  exp.writeFinal(sink);
  Outcome o;
  o.global = exp.global();
  for (const char* name : {"/summary/client_accuracy", "/summary/client_loss", "/summary/client_val_accuracy",
                           "/summary/selected_round"})
    o.gathered[name] = comm.allgatherv(sink.values.at(name));
  for (const char* row : {"client_accuracy", "client_val_accuracy", "client_val_loss"})
    for (const auto& values : sink.rows.at(row)) {
      const std::vector<double> all = comm.allgatherv(values);
      o.gathered[row].insert(o.gathered[row].end(), all.begin(), all.end());
    }
  if (sink.values.count("/model/clients"))
    o.gathered["/model/clients"] = comm.allgatherv(sink.values.at("/model/clients"));
  o.mean = sink.values.at("/summary/mean");
  for (const char* name : {"global_accuracy", "global_loss"}) o.gathered[name] = sink.scalars.at(name);
  for (const char* name : {"/summary/global_accuracy", "/summary/global_loss"}) o.gathered[name] = sink.values.at(name);
  return o;
}

}  // namespace

class ProtocolInvariance : public ::testing::TestWithParam<Case> {};

TEST_P(ProtocolInvariance, DistributedRunEqualsSingleProcessRun) {
  const ExperimentConfig cfg = caseConfig(GetParam());
  const Outcome a = run(cfg, Communicator::world());
  const Outcome b = run(cfg, Communicator::single());
  EXPECT_EQ(a.global, b.global) << "global models differ";
  EXPECT_EQ(a.mean, b.mean);
  ASSERT_EQ(a.gathered.size(), b.gathered.size());
  for (const auto& [name, values] : a.gathered) {
    ASSERT_TRUE(b.gathered.count(name)) << name;
    const std::vector<double>& other = b.gathered.at(name);
    ASSERT_EQ(values.size(), other.size()) << name;
    for (std::size_t i = 0; i < values.size(); ++i)
      EXPECT_TRUE(values[i] == other[i] || (values[i] != values[i] && other[i] != other[i]))
          << name << "[" << i << "]: " << values[i] << " vs " << other[i];
  }
  EXPECT_EQ(a.gathered.at("/summary/selected_round").size(), 6u);
}

INSTANTIATE_TEST_SUITE_P(
    Options, ProtocolInvariance,
    ::testing::Values(
        Case{"fedavg_adam_bestval",
             {"--algorithm", "fedavg", "--fl.server_optimizer", "adam", "--fl.server_lr", "0.02",
              "--fl.clients_per_round", "4", "--eval.select", "best_val", "--output.client_models", "true"}},
        Case{"qffl_yogi_afterlocal",
             {"--algorithm", "qffl", "--fl.server_optimizer", "yogi", "--fl.server_lr", "0.02", "--eval.point",
              "after_local", "--eval.client_weighting", "samples"}},
        Case{"playerfl_momentum_bestloss",
             {"--algorithm", "playerfl", "--fl.server_optimizer", "momentum", "--fl.server_lr", "0.5",
              "--eval.select", "best_val", "--eval.select_metric", "loss", "--eval.point", "after_local",
              "--output.client_models", "true"}},
        Case{"fedfa_adagrad", {"--algorithm", "fedfa", "--fl.server_optimizer", "adagrad", "--fl.server_lr", "0.05"}},
        Case{"fedavg_global_at_end", {"--algorithm", "fedavg", "--eval.global", "end", "--eval.every", "3"}},
        Case{"fedbabu_head_afterlocal",
             {"--algorithm", "fedbabu", "--fedbabu.head", "fc2,fc3", "--fl.server_optimizer", "adam",
              "--fl.server_lr", "0.02", "--eval.point", "after_local", "--eval.select", "best_val",
              "--fl.dropout", "0.3"}},
        // Client optimizer state kept per client, schedules, initialisations and given input constants.
        Case{"fedavg_adamw_keep_exponential",
             {"--algorithm", "fedavg", "--train.optimizer", "adamw", "--train.lr", "0.003", "--train.weight_decay",
              "0.01", "--train.optimizer_state", "keep", "--train.lr_schedule", "exponential", "--train.lr_gamma",
              "0.8", "--model.init_scheme", "xavier_uniform"}},
        Case{"ditto_nesterov_keep_step",
             {"--algorithm", "ditto", "--train.momentum", "0.9", "--train.nesterov", "true", "--train.optimizer_state",
              "keep", "--train.lr_schedule", "step", "--train.lr_step_rounds", "2", "--train.lr_gamma", "0.5",
              "--model.init_scheme", "kaiming_uniform", "--data.normalize", "mean_std", "--data.mean", "0.286",
              "--data.std", "0.353"}}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });
