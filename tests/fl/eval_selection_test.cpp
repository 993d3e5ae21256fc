// The evaluation rules' bookkeeping (fl/eval_selection.hpp): which candidate each client keeps under
// eval.select = final and best_val (accuracy or loss), ties, missing validation scores, the kept
// parameters and the checkpoint round trip.
#include <gtest/gtest.h>

#include <map>
#include <unordered_map>
#include <vector>

#include "fl/eval_selection.hpp"
#include "core/types.hpp"
#include "support/memory_archive.hpp"

namespace fedsilo {
namespace {

ClientEvaluation candidate(double testAccuracy, double valAccuracy, double valLoss) {
  ClientEvaluation e;
  e.testAccuracy = testAccuracy;
  e.testF1 = testAccuracy / 2;
  e.testLoss = 1.0 - testAccuracy;
  e.valAccuracy = valAccuracy;
  e.valLoss = valLoss;
  return e;
}

EvalConfig rules(EvalSelect select, SelectMetric metric = SelectMetric::Accuracy) {
  EvalConfig e;
  e.select = select;
  e.selectMetric = metric;
  return e;
}

TEST(ClientSelection, FinalKeepsTheLastCandidate) {
  ClientSelection s(rules(EvalSelect::Final), {0}, false);
  EXPECT_EQ(s.selectedRound(0), -1);
  s.offer(0, 0, candidate(0.5, 0.9, 0.1), nullptr, 0);
  s.offer(0, 3, candidate(0.4, 0.1, 2.0), nullptr, 0);
  EXPECT_EQ(s.selectedRound(0), 3);
  EXPECT_EQ(s.selected(0).testAccuracy, 0.4);
}

TEST(ClientSelection, BestValidationAccuracyEarliestOnTies) {
  ClientSelection s(rules(EvalSelect::BestVal), {0}, false);
  const double val[] = {0.5, 0.7, 0.7, 0.6};
  for (int t = 0; t < 4; ++t) s.offer(0, t, candidate(0.1 * t, val[t], 1.0), nullptr, 0);
  EXPECT_EQ(s.selectedRound(0), 1);
  EXPECT_DOUBLE_EQ(s.selected(0).testAccuracy, 0.1);
  EXPECT_DOUBLE_EQ(s.selected(0).testF1, 0.05);
  EXPECT_DOUBLE_EQ(s.selected(0).valAccuracy, 0.7);
}

TEST(ClientSelection, BestValidationLoss) {
  ClientSelection s(rules(EvalSelect::BestVal, SelectMetric::Loss), {0}, false);
  const double loss[] = {1.0, 0.8, 0.9, 0.8};
  for (int t = 0; t < 4; ++t) s.offer(0, t, candidate(0.1 * t, 0.99 - 0.1 * t, loss[t]), nullptr, 0);
  EXPECT_EQ(s.selectedRound(0), 1);  // the accuracy would have picked round 0
  EXPECT_DOUBLE_EQ(s.selected(0).valLoss, 0.8);
}

TEST(ClientSelection, MissingValidationScores) {
  ClientSelection s(rules(EvalSelect::BestVal), {0, 1, 2}, false);
  // Client 0: a score arrives after none: it wins, and a later missing score does not replace it.
  s.offer(0, 0, candidate(0.1, kNaN, kNaN), nullptr, 0);
  s.offer(0, 1, candidate(0.2, 0.3, 1.0), nullptr, 0);
  s.offer(0, 2, candidate(0.3, kNaN, kNaN), nullptr, 0);
  EXPECT_EQ(s.selectedRound(0), 1);
  // Client 1: no candidate ever has a score: the last one is kept, as with final.
  s.offer(1, 0, candidate(0.1, kNaN, kNaN), nullptr, 0);
  s.offer(1, 1, candidate(0.2, kNaN, kNaN), nullptr, 0);
  EXPECT_EQ(s.selectedRound(1), 1);
  // Client 2: never offered.
  EXPECT_EQ(s.selectedRound(2), -1);
}

TEST(ClientSelection, KeepsTheParametersOfTheKeptCandidateOnlyWhenAsked) {
  ClientSelection keeping(rules(EvalSelect::BestVal), {0}, true), plain(rules(EvalSelect::BestVal), {0}, false);
  const std::vector<float> r0{1, 2}, r1{3, 4}, r2{5, 6};
  for (ClientSelection* s : {&keeping, &plain}) {
    s->offer(0, 0, candidate(0.1, 0.2, 1.0), r0.data(), r0.size());
    s->offer(0, 1, candidate(0.2, 0.6, 1.0), r1.data(), r1.size());
    s->offer(0, 2, candidate(0.3, 0.4, 1.0), r2.data(), r2.size());
  }
  ASSERT_NE(keeping.params(0), nullptr);
  EXPECT_EQ(*keeping.params(0), r1);
  EXPECT_EQ(plain.params(0), nullptr);
}

TEST(ClientSelection, CheckpointRestoresFiguresRoundsAndParametersByClientId) {
  // Clients 4 and 7 of this rank (not adjacent: a placement by samples); client 7 never offered anything.
  ClientSelection saved(rules(EvalSelect::BestVal), {4, 7}, true);
  const std::vector<float> p{7, 8, 9};
  saved.offer(0, 2, candidate(0.25, 0.5, 0.75), p.data(), p.size());
  test::MemoryArchive ar;
  saved.checkpoint(ar);
  EXPECT_EQ(ar.replicatedArrays(), 0u);  // the selection is per client: nothing replicated
  EXPECT_EQ(ar.clientFloatArrays(), 1u);
  ar.startLoading();
  ClientSelection restored(rules(EvalSelect::BestVal), {4, 7}, true);
  restored.checkpoint(ar);
  EXPECT_EQ(restored.selectedRound(0), 2);
  EXPECT_EQ(restored.selectedRound(1), -1);
  EXPECT_DOUBLE_EQ(restored.selected(0).testAccuracy, 0.25);
  EXPECT_DOUBLE_EQ(restored.selected(0).testF1, 0.125);
  EXPECT_DOUBLE_EQ(restored.selected(0).testLoss, 0.75);
  EXPECT_DOUBLE_EQ(restored.selected(0).valAccuracy, 0.5);
  EXPECT_DOUBLE_EQ(restored.selected(0).valLoss, 0.75);
  ASSERT_NE(restored.params(0), nullptr);
  EXPECT_EQ(*restored.params(0), p);
  EXPECT_EQ(restored.params(1), nullptr);
  // The restored selection goes on comparing against the restored best.
  restored.offer(0, 3, candidate(0.9, 0.5, 0.1), p.data(), p.size());
  EXPECT_EQ(restored.selectedRound(0), 2);
}

TEST(ClientSelection, WithoutParametersTheCheckpointHoldsNone) {
  ClientSelection saved(rules(EvalSelect::Final), {0}, false);
  saved.offer(0, 0, candidate(0.5, 0.5, 0.5), nullptr, 0);
  test::MemoryArchive ar;
  saved.checkpoint(ar);
  EXPECT_EQ(ar.replicatedArrays(), 0u);
  EXPECT_EQ(ar.clientFloatArrays(), 0u);
}

}  // namespace
}  // namespace fedsilo
