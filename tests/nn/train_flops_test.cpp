// Training FLOPs per sample (Model::trainFlopsPerSample): the mlp and cnn_mcmahan presets counted by
// hand, layer by layer, with the convention of docs/system.md (a multiply-add 2, an elementwise
// operation or comparison 1; the first layer computes no input gradient).
#include <gtest/gtest.h>

#include "nn/dense.hpp"
#include "nn/embedding.hpp"
#include "nn/lstm.hpp"
#include "nn/presets.hpp"

namespace fedsilo {
namespace {

ModelConfig preset(const std::string& name) {
  ModelConfig c;
  c.name = parseEnum<ModelPreset>("model", name);
  return c;
}

TEST(TrainFlops, MlpCountedByHand) {
  // 784 -> 200 -> ReLU -> 200 -> ReLU -> 10 (FashionMNIST).
  const double fc1 = 2 * (2.0 * 784 * 200 + 200);  // forward and weight gradient, no dx
  const double relu = 2 * 200.0;                   // forward and dx
  const double fc2 = 2 * (2.0 * 200 * 200 + 200) + 2.0 * 200 * 200;
  const double fc3 = 2 * (2.0 * 200 * 10 + 10) + 2.0 * 200 * 10;
  const double byHand = fc1 + relu + fc2 + relu + fc3;
  EXPECT_EQ(byHand, 880820.0);
  const auto m = buildModel<float>(preset("mlp"), InputSpec{Shape{1, 28, 28}, 10, 0});
  EXPECT_DOUBLE_EQ(m->trainFlopsPerSample(), byHand);
}

TEST(TrainFlops, CnnMcMahanCountedByHand) {
  // conv5x5(1 -> 32, pad 2) on 28x28: 32 x 28 x 28 outputs, each a dot product of 25 weights + bias.
  const double out1 = 32.0 * 28 * 28, mac1 = 2 * out1 * 25;
  const double conv1 = 2 * (mac1 + out1);  // first layer: no dx
  const double relu1 = 2 * out1;
  const double pooled1 = 32.0 * 14 * 14, pool1 = pooled1 * 3 + pooled1;  // 3 comparisons a window, dx
  // conv5x5(32 -> 64, pad 2) on 14x14: each of 64 x 14 x 14 outputs a dot product of 800 weights.
  const double out2 = 64.0 * 14 * 14, mac2 = 2 * out2 * 800;
  const double conv2 = 2 * (mac2 + out2) + mac2;
  const double relu2 = 2 * out2;
  const double pooled2 = 64.0 * 7 * 7, pool2 = pooled2 * 3 + pooled2;
  const double fc1 = 2 * (2.0 * 3136 * 512 + 512) + 2.0 * 3136 * 512;
  const double relu3 = 2 * 512.0;
  const double fc2 = 2 * (2.0 * 512 * 10 + 10) + 2.0 * 512 * 10;
  const double byHand = conv1 + relu1 + pool1 + conv2 + relu2 + pool2 + fc1 + relu3 + fc2;
  const auto m = buildModel<float>(preset("cnn_mcmahan"), InputSpec{Shape{1, 28, 28}, 10, 0});
  EXPECT_DOUBLE_EQ(m->trainFlopsPerSample(), byHand);
  EXPECT_EQ(byHand, 72574740.0);  // of which conv2 alone is 83%
}

TEST(TrainFlops, DropoutAndEveryLayerKindCount) {
  ModelConfig c = preset("mlp");
  c.dropout = 0.5;  // a mask product forward and backward after each hidden ReLU
  const auto plain = buildModel<float>(preset("mlp"), InputSpec{Shape{1, 28, 28}, 10, 0});
  const auto dropped = buildModel<float>(c, InputSpec{Shape{1, 28, 28}, 10, 0});
  EXPECT_DOUBLE_EQ(dropped->trainFlopsPerSample() - plain->trainFlopsPerSample(), 2 * (2 * 200.0));
  // An LSTM of hidden H over T steps of inputs of width `in`, as its comment counts.
  const LstmT<float> lstm(16, 8, 5, false);
  const FlopCount f = lstm.flopsPerSample();
  EXPECT_DOUBLE_EQ(f.forward, 5 * (8.0 * 8 * (16 + 8) + 17 * 8));
  EXPECT_DOUBLE_EQ(f.paramGrad, 5 * (8.0 * 8 * (16 + 8) + 8 * 8 * 8 + 20 * 8));
  EXPECT_DOUBLE_EQ(f.inputGrad, 5 * 8.0 * 8 * 16);
  const EmbeddingT<float> embed(100, 32, 20);
  EXPECT_DOUBLE_EQ(embed.flopsPerSample().paramGrad, 20.0 * 32);
  EXPECT_EQ(embed.flopsPerSample().forward, 0.0);
}

}  // namespace
}  // namespace fedsilo
