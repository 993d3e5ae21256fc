#include "app/experiment_options.hpp"

#include <string>

#include "core/config.hpp"
#include "core/strings.hpp"

namespace fedsilo {

namespace {

// One table per section, in --help's order. Keep docs/cli.md in step (tools/gen_cli_doc.sh). The
// enumerated options list their values from the one table of each enumeration (core/config.hpp).

// The options of what runs and where its results go.
std::vector<Opt> runOptions() {
  return {
      {"algorithm", "fedavg", "federated algorithm (see --help list below)"},
      {"dataset", "fashion_mnist", joinNames<DatasetKind>(" | ")},
      {"model", "mlp", "model preset: " + joinNames<ModelPreset>(" | ")},
      {"clients", "10", "number of clients K (>= 1)"},
      {"rounds", "20",
       "number of communication rounds (>= 1); when not set, a one-shot algorithm runs its own count (gems 1, or 2 "
       "neuron-wise; the baselines 1) and the resolved configuration shows it"},
      {"seed", "0", "experiment seed (>= 0); every random stream is keyed by (seed, client, round, purpose)"},
      {"output", "results.h5",
       "results file (HDF5; missing parent folders are created); written as <output>.partial and renamed when "
       "complete"},
  };
}

// The options of local training.
std::vector<Opt> trainOptions() {
  return {
      {"train.epochs", "1", "local epochs per round (>= 0)"},
      {"train.batch", "32", "mini-batch size (>= 1)"},
      {"train.lr", "0.05", "learning rate (> 0); with train.lr_schedule the lr of round 0"},
      {"train.momentum", "0", "SGD momentum in [0, 1) (train.optimizer = sgd only)"},
      {"train.weight_decay", "0",
       "weight decay (>= 0) with PyTorch's meaning per optimizer: L2 added to the gradient (sgd, adam) or "
       "decoupled p <- p (1 - lr wd) (adamw; PyTorch's AdamW default of 0.01 is not applied)"},
  };
}

// The options of how the training data is split into clients.
std::vector<Opt> partitionOptions() {
  return {
      {"partition.scheme", "dirichlet", joinNames<PartitionScheme>(" | ")},
      {"partition.alpha", "0.5", "Dirichlet concentration (> 0)"},
      {"partition.shards", "200", "number of shards, each of one label (shards scheme; >= the labels present)"},
      {"partition.shards_per_client", "2", "shards per client: N, or min,max for the unbalanced variant"},
      {"partition.file", "", ".npy of integer client ids, one per training sample (file scheme)"},
      {"partition.samples_per_client", "0", "keep at most this many samples per client (0 = all)"},
  };
}

// The options of the data sets.
std::vector<Opt> dataOptions() {
  return {
      {"data.dir", "", "dataset directory"},  // help completed by helpText: the per-dataset default
      {"data.file", "", "data file for the csv and hdf5 datasets"},
      {"data.split", "0.8,0.1,0.1",
       "per-client train,val,test fractions (sum 1; zeros allowed: metrics needing that split are NaN)"},
      {"data.alpha", "1", "Synthetic(alpha, beta): alpha"},
      {"data.beta", "1", "Synthetic(alpha, beta): beta"},
      {"data.users", "100", "synthetic/sequence: number of users"},
      {"data.label_column", "label", "csv: label column name"},
      {"data.client_column", "", "csv: optional client column (natural partition)"},
      {"data.heart_variant", "playerfl", "heart: preprocessing: " + joinNames<HeartVariant>(" | ", true)},
      {"data.seq_length", "20", "sequence/leaf text: tokens per sample"},
      {"data.vocab_size", "50", "sequence: vocabulary size"},
      {"data.samples_per_user", "200", "sequence: samples per user"},
      {"data.classes", "0", "sequence: number of classes (0 = default)"},
      {"data.max_classes", "100000",
       "largest number of classes of a dataset read from files: every label must lie in [0, N); a label outside "
       "it, or more distinct labels, is a data error (exit 3)"},
  };
}

// The options of the model.
std::vector<Opt> modelOptions() {
  return {
      {"model.hidden", "200,200", "mlp hidden layer widths"},
      {"model.dropout", "0", "dropout probability after hidden layers, in [0, 1)"},
      {"model.loss", "", "loss override: " + joinNames<LossKind>(" | ") + " (default: the preset's)"},
      {"model.focal_gamma", "2", "focal loss gamma (>= 0)"},
      {"model.focal_alpha", "",
       "focal loss: per-class weights alpha_0,...,alpha_{C-1} (finite, >= 0; <= 1 with focal_playerfl; one per "
       "class; empty: all 1)"},
      {"model.embed_dim", "32", "lstm, transformer_playerfl: embedding dimension"},
      {"model.max_len", "0",
       "transformer_playerfl: rows of the learned position table (>= the data's tokens per sample; 0: exactly "
       "that)"},
      {"model.lstm_hidden", "64", "lstm: hidden units per layer"},
      {"model.lstm_layers", "2", "lstm: stacked layers"},
  };
}

// The options of the federation: participation, placement, the server optimizer.
std::vector<Opt> federationOptions() {
  return {
      {"fl.clients_per_round", "0", "clients sampled per round (0 = all)"},
      {"fl.dropout", "0", "probability that a selected client drops out of a round, in [0, 1)"},
      {"fl.skip_diverged", "false", "drop a client update whose loss or parameters are NaN/Inf instead of failing"},
      {"fl.placement", "samples",
       "clients -> ranks, balancing: " + joinNames<PlacementBalance>(" | ", true) +
           "; results do not depend on it"},
      {"fl.server_optimizer", "none",
       "server optimizer on the aggregate, Delta = aggregate - global (FedOpt, Reddi et al. 2021, no bias "
       "correction): " + joinNames<ServerOptimizerKind>(" | ", true) +
           "; only for algorithms that average models"},
      {"fl.server_lr", "1", "server learning rate eta (> 0) of fl.server_optimizer"},
      {"fl.server_momentum", "0.9", "fl.server_optimizer = momentum: beta in [0, 1) of m <- beta m + Delta"},
      {"fl.server_beta1", "0.9", "adam, yogi, adagrad: first-moment decay beta1 in [0, 1)"},
      {"fl.server_beta2", "0.99", "adam, yogi: second-moment decay beta2 in [0, 1)"},
      {"fl.server_tau", "0.001",
       "adam, yogi, adagrad: adaptivity tau > 0 (step eta m / (sqrt(v) + tau), v from tau^2)"},
      {"fl.max_concurrency", "0",
       "asynchronous algorithms (fedasync, fedbuff): silos training at once (0 = every silo; docs/async.md)"},
  };
}

// The options of evaluation and the model each client's summary uses.
std::vector<Opt> evaluationOptions() {
  return {
      {"eval.every", "1", "evaluate every N rounds (the last round always)"},
      {"eval.every_seconds", "0",
       "asynchronous algorithms: evaluate the first version past each multiple of this many simulated seconds "
       "instead of every eval.every versions (0 = off)"},
      {"eval.batch", "256", "evaluation batch size"},
      {"eval.select", "final",
       "model each client's summary uses: " + joinNames<EvalSelect>(" | ", true) +
           " (best_val needs validation samples, data.split)"},
      {"eval.select_metric", "accuracy", "eval.select = best_val: " + joinNames<SelectMetric>(" | ", true)},
      {"eval.point", "after_aggregation",
       "when clients are evaluated: " + joinNames<EvalPoint>(" | ", true) +
           "; a client that did not train that round is evaluated after the server step"},
      {"eval.client_weighting", "uniform",
       "weights of the client mean in /summary/mean and /summary/mean_f1: " + joinNames<ClientWeighting>(" | ", true)},
      {"eval.global", "rounds",
       "when the global model is evaluated on the test set: " + joinNames<GlobalEvaluation>(" | ", true) +
           "; /rounds/global_* are NaN in the rounds left out"},
  };
}

// The options of extra outputs.
std::vector<Opt> outputOptions() {
  return {
      {"output.client_models", "false", "also write every client's final model to /model/clients"},
      {"output.jsonl", "false",
       "also write <output>.jsonl: one JSON object per round, flushed as the round ends (tail -f it, or read it "
       "without h5py)"},
      {"output.progress_seconds", "10",
       "print a progress line during a round at most this often, in seconds (0 = never)"},
  };
}

// The options of checkpoints.
std::vector<Opt> checkpointOptions() {
  return {
      {"checkpoint.every", "0", "write <output>.ckpt every N rounds (0: only on SIGTERM/SIGUSR1)"},
  };
}

}  // namespace

const std::vector<Opt>& experimentOptions() {
  static const std::vector<Opt> opts = [] {
    std::vector<Opt> all;
    for (auto&& section : {runOptions(), trainOptions(), optimizerOptions(), partitionOptions(), dataOptions(),
                           inputOptions(), modelOptions(), initOptions(), federationOptions(), evaluationOptions(),
                           outputOptions(), checkpointOptions()})
      all.insert(all.end(), section.begin(), section.end());
    return all;
  }();
  return opts;
}

}  // namespace fedsilo
