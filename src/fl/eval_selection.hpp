// The evaluation rules (eval.select, eval.select_metric; docs/algorithms.md, "Evaluation rules"):
// which of a client's evaluated models its summary (/summary/client_*) reports.
//
// Every evaluation of a client is a candidate: one per evaluated round (at eval.point), then the
// end-of-training evaluation, which belongs to the last round and comes after that round's own
// (with eval.point = after_local only for algorithms whose end-of-training step changes the models,
// FedBABU's fine-tuning). eval.select = final keeps the last candidate; best_val keeps the one with
// the highest validation accuracy (select_metric = accuracy) or the lowest validation loss (loss),
// the earlier one on ties, as the PLayer-FL authors' best-validation snapshot. A candidate without a
// finite validation score (no validation samples) never replaces one with a score; while no
// candidate has a score, each replaces the last.
//
// The selection keeps each local client's figures (test and validation) of its kept candidate and,
// only when asked (keepParams: eval.select = best_val with output.client_models), its parameters:
// then P floats per local client, the memory of a second model per client.
#pragma once
#include <unordered_map>
#include <vector>

#include "core/config.hpp"
#include "core/state_archive.hpp"

namespace fedsilo {

// One evaluation of a client's model: its test split and its validation split (NaN: no samples).
struct ClientEvaluation {
  double testAccuracy, testF1, testLoss, valAccuracy, valLoss;
  ClientEvaluation();
};

class ClientSelection {
 public:
  // `clients`: the ids of this rank's clients; local index i is clients[i].
  ClientSelection(const EvalConfig& cfg, std::vector<int> clients, bool keepParams);

  // Offers client (local index `i`) evaluated as `e` with the model of round `round` (`params`,
  // `numParams` values; read only when keeping parameters; null: a model that is not one parameter
  // vector, whose parameters are not kept).
  void offer(int i, int round, const ClientEvaluation& e, const float* params, std::size_t numParams);
  // Whether `e` would replace client i's kept candidate.
  bool replaces(int i, const ClientEvaluation& e) const;

  const ClientEvaluation& selected(int i) const { return figures_[static_cast<std::size_t>(i)]; }
  int selectedRound(int i) const { return rounds_[static_cast<std::size_t>(i)]; }  // -1: nothing offered yet
  // The kept parameters of client i (nullptr unless keeping parameters and one was offered).
  const std::vector<float>* params(int i) const;
  bool keepsParams() const { return keepParams_; }

  // Saves or restores (collective, symmetric) the kept figures, rounds and parameters, by client id.
  void checkpoint(StateArchive& ar);

 private:
  double score(const ClientEvaluation& e) const;  // larger is better; NaN: none

  EvalSelect select_;
  SelectMetric metric_;
  std::vector<int> clients_;
  bool keepParams_;
  std::vector<ClientEvaluation> figures_;
  std::vector<int> rounds_;
  std::unordered_map<int, std::vector<float>> params_;  // by local index
};

}  // namespace fedsilo
