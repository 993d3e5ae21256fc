// train.precision = bf16 is rank-invariant: a small CNN federation and a small MLP one (dense layers only)
// at 1, 2 and 4 ranks (ctest runs this binary at each) give the same bits as each rank running them
// alone (support/world_vs_single.hpp), and each bf16 run really differs from the fp32 one (the
// precision reached the convolutions and the dense layers).
#include <gtest/gtest.h>

#include "app/config_parser.hpp"
#include "nn/bf16.hpp"
#include "support/world_vs_single.hpp"

using namespace fedsilo;

namespace {

ExperimentConfig smallConfig(const char* model, const char* precision) {
  return parseArguments({"--clients", "4", "--rounds", "2", "--model", model, "--partition.samples_per_client", "40",
                         "--fl.clients_per_round", "3", "--train.batch", "16", "--eval.batch", "100",
                         "--train.precision", precision})
      .config;
}

void checkWorldEqualsSingle(const char* model) {
  const ExperimentConfig bf16 = smallConfig(model, "bf16");
  ASSERT_EQ(bf16.train.precision, Precision::Bf16);
  selectBf16(true);
  const test::WorldAndSingle r = test::runOnWorldAndAlone(bf16);
  selectBf16(false);
  EXPECT_TRUE(test::identicalRecords(r.world, r.single));
  const test::RunRecords fp32 = test::runAndGather(smallConfig(model, "fp32"), Communicator::single());
  ASSERT_EQ(fp32.global.size(), r.world.global.size());
  EXPECT_NE(fp32.global, r.world.global) << "the bf16 run computed the fp32 model";
}

}  // namespace

TEST(Bf16Precision, DistributedRunEqualsSingleProcessRun) {
  // The same on every rank (one CPU): all skip or none.
  if (!bf16Missing().empty()) GTEST_SKIP() << bf16Missing();
  checkWorldEqualsSingle("cnn_mcmahan");
}

TEST(Bf16Precision, DenseOnlyDistributedRunEqualsSingleProcessRun) {
  if (!bf16Missing().empty()) GTEST_SKIP() << bf16Missing();
  checkWorldEqualsSingle("mlp");
}
