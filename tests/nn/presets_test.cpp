// Model presets: parameter counts, block names, input validation, gradients of the whole model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "grad_check.hpp"
#include "nn/dropout.hpp"
#include "nn/presets.hpp"

namespace fedsilo::test {
namespace {

ModelConfig preset(const std::string& name) {
  ModelConfig c;
  c.name = parseEnum<ModelPreset>("model", name);
  return c;
}

const InputSpec kFashion{Shape{1, 28, 28}, 10, 0};
const InputSpec kCifar{Shape{3, 32, 32}, 10, 0};
const InputSpec kTabular{Shape{784, 1, 1}, 10, 0};

std::vector<std::string> blockNames(const ModelT<float>& m) {
  std::vector<std::string> out;
  for (const auto& b : m.blocks()) out.push_back(b.name);
  return out;
}

std::vector<Index> blockSizes(const ModelT<float>& m) {
  std::vector<Index> out;
  for (const auto& b : m.blocks()) out.push_back(b.size);
  return out;
}

TEST(Presets, Names) {
  EXPECT_EQ(modelPresetNames(),
            (std::vector<std::string>{"mlp", "logreg", "svm", "cnn_mcmahan", "cnn_playerfl", "lstm", "heart_mlp",
                                      "cnn_playerfl_cifar", "transformer_playerfl"}));
}

TEST(Presets, Mlp) {
  auto m = buildModel<float>(preset("mlp"), kTabular);
  EXPECT_EQ(m->numParams(), 199210);
  EXPECT_EQ(blockNames(*m), (std::vector<std::string>{"fc1", "fc2", "fc3"}));
  EXPECT_EQ(blockSizes(*m), (std::vector<Index>{157000, 40200, 2010}));
  EXPECT_EQ(m->loss().kind(), "cross_entropy");
  // The same on the image shape (flattened); CIFAR's 3072 inputs.
  EXPECT_EQ(buildModel<float>(preset("mlp"), kFashion)->numParams(), 199210);
  EXPECT_EQ(buildModel<float>(preset("mlp"), kCifar)->numParams(), 656810);
  // Dropout after each hidden ReLU, no extra parameters.
  ModelConfig d = preset("mlp");
  d.dropout = 0.25;
  auto md = buildModel<float>(d, kTabular);
  EXPECT_EQ(md->numParams(), 199210);
  int drops = 0;
  for (std::size_t i = 0; i < md->numLayers(); ++i) {
    if (md->layer(i).kind() == "dropout") {
      ++drops;
      EXPECT_EQ(md->layer(i - 1).kind(), "relu");
      EXPECT_EQ(dynamic_cast<DropoutT<float>&>(md->layer(i)).rate(), 0.25);
    }
  }
  EXPECT_EQ(drops, 2);
}

TEST(Presets, LogregAndSvm) {
  auto lr = buildModel<float>(preset("logreg"), kTabular);
  EXPECT_EQ(lr->numParams(), 7850);
  EXPECT_EQ(blockNames(*lr), (std::vector<std::string>{"fc1"}));
  EXPECT_EQ(lr->loss().kind(), "cross_entropy");
  EXPECT_EQ(buildModel<float>(preset("logreg"), kCifar)->numParams(), 30730);
  auto svm = buildModel<float>(preset("svm"), kTabular);
  EXPECT_EQ(svm->numParams(), 7850);
  EXPECT_EQ(blockNames(*svm), (std::vector<std::string>{"fc1"}));
  EXPECT_EQ(svm->loss().kind(), "hinge");
  ModelConfig ce = preset("svm");
  ce.loss = LossKind::CrossEntropy;
  EXPECT_EQ(buildModel<float>(ce, kTabular)->loss().kind(), "cross_entropy");
  ModelConfig focal = preset("logreg");
  focal.loss = LossKind::Focal;
  EXPECT_EQ(buildModel<float>(focal, kTabular)->loss().kind(), "focal");
}

TEST(Presets, CnnMcMahan) {
  auto m = buildModel<float>(preset("cnn_mcmahan"), kFashion);
  EXPECT_EQ(m->numParams(), 1663370);
  EXPECT_EQ(blockNames(*m), (std::vector<std::string>{"conv1", "conv2", "fc1", "fc2"}));
  EXPECT_EQ(blockSizes(*m), (std::vector<Index>{832, 51264, 1606144, 5130}));
  // Tensor names and bias flags, as PLayer-FL's sensitivity and the checkpoints see them.
  const auto& conv1 = m->blocks()[0];
  ASSERT_EQ(conv1.tensors.size(), 2u);
  EXPECT_EQ(conv1.tensors[0].name, "conv1.weight");
  EXPECT_FALSE(conv1.tensors[0].isBias);
  EXPECT_EQ(conv1.tensors[1].name, "conv1.bias");
  EXPECT_TRUE(conv1.tensors[1].isBias);
  // CIFAR shape: 3 input channels, 8x8 after two pools -> fc1 4096 -> 512.
  auto c = buildModel<float>(preset("cnn_mcmahan"), kCifar);
  EXPECT_EQ(blockSizes(*c), (std::vector<Index>{2432, 51264, 2097664, 5130}));
  EXPECT_EQ(c->numParams(), 2156490);
}

TEST(Presets, CnnPlayerFl) {
  auto m = buildModel<float>(preset("cnn_playerfl"), kFashion);
  EXPECT_EQ(blockNames(*m), (std::vector<std::string>{"conv1", "conv2", "conv3", "fc1", "fc2"}));
  EXPECT_EQ(blockSizes(*m), (std::vector<Index>{1664, 204928, 819456, 25700, 1010}));
  EXPECT_EQ(m->numParams(), 1052758);
  EXPECT_EQ(buildModel<float>(preset("cnn_playerfl"), kCifar)->numParams(), 1055958);
  EXPECT_EQ(buildModel<float>(preset("cnn_playerfl"), InputSpec{Shape{1, 28, 28}, 62, 0})->numParams(), 1058010);
}

TEST(Presets, CnnPlayerFlCifar) {
  // The PLayer-FL authors' CIFAR model (code/models.py, class CIFAR), counted by hand: five 3x3 convs,
  // inC*outC*9 + outC each: 3*64*9+64 = 1,792; 64*128*9+128 = 73,856; 128*256*9+256 = 295,168;
  // 256*512*9+512 = 1,180,160; 512*512*9+512 = 2,359,808; fc1 512*100+100 = 51,300; fc2 100*10+10 = 1,010.
  auto m = buildModel<float>(preset("cnn_playerfl_cifar"), kCifar);
  EXPECT_EQ(blockNames(*m), (std::vector<std::string>{"conv1", "conv2", "conv3", "conv4", "conv5", "fc1", "fc2"}));
  EXPECT_EQ(blockSizes(*m), (std::vector<Index>{1792, 73856, 295168, 1180160, 2359808, 51300, 1010}));
  EXPECT_EQ(m->numParams(), 3963094);
  // Padding 2 grows each side by 2: 32 34 36 -> pool 18, 20 22 -> pool 11, 13; then the global pool.
  std::vector<std::string> kinds;
  std::vector<int> sides;
  for (std::size_t i = 0; i < m->numLayers(); ++i) {
    kinds.push_back(m->layer(i).kind());
    if (kinds.back() == "conv2d" || kinds.back() == "maxpool2d") sides.push_back(m->layer(i).outputShape().h);
  }
  EXPECT_EQ(sides, (std::vector<int>{34, 36, 18, 20, 22, 11, 13}));
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "dropout"), 5);
  EXPECT_EQ(kinds[kinds.size() - 4], "global_avg_pool");
  for (std::size_t i = 0; i < m->numLayers(); ++i) {
    if (const auto* d = dynamic_cast<const DropoutT<float>*>(&m->layer(i))) {
      EXPECT_DOUBLE_EQ(d->rate(), 0.3);
    }
  }
  // One input channel (FashionMNIST-sized): conv1 1*64*9+64 = 640.
  EXPECT_EQ(buildModel<float>(preset("cnn_playerfl_cifar"), kFashion)->numParams(), 3963094 - 1792 + 640);
}

TEST(Presets, HeartMlp) {
  // The PLayer-FL authors' Heart model (code/models.py): Linear 10->50, 50->20, 20->20, 20->5 with
  // ReLU between, no dropout. By hand: 10*50+50 + 50*20+20 + 20*20+20 + 20*5+5 = 550+1020+420+105 = 2,095.
  auto m = buildModel<float>(preset("heart_mlp"), InputSpec{Shape{10, 1, 1}, 5, 0});
  EXPECT_EQ(m->numParams(), 2095);
  EXPECT_EQ(blockNames(*m), (std::vector<std::string>{"fc1", "fc2", "fc3", "fc4"}));
  EXPECT_EQ(blockSizes(*m), (std::vector<Index>{550, 1020, 420, 105}));
  std::vector<std::string> kinds;
  for (std::size_t i = 0; i < m->numLayers(); ++i) kinds.push_back(m->layer(i).kind());
  EXPECT_EQ(kinds, (std::vector<std::string>{"dense", "relu", "dense", "relu", "dense", "relu", "dense"}));
  // FLamby's preprocessing: 13 features, 2 classes: 13*50+50 + 1020 + 420 + 20*2+2 = 2,182.
  EXPECT_EQ(buildModel<float>(preset("heart_mlp"), InputSpec{Shape{13, 1, 1}, 2, 0})->numParams(), 2182);
}

TEST(Presets, Lstm) {
  ModelConfig c = preset("lstm");  // embed 32, hidden 64, 2 layers
  auto m = buildModel<float>(c, InputSpec{Shape{1, 1, 20}, 5, 50});
  EXPECT_EQ(blockNames(*m), (std::vector<std::string>{"embed", "lstm1", "lstm2", "fc1"}));
  EXPECT_EQ(blockSizes(*m), (std::vector<Index>{1600, 25088, 33280, 325}));
  // The built-in sequence dataset's defaults: vocabulary 50, 4 classes, length 20.
  EXPECT_EQ(buildModel<float>(c, InputSpec{Shape{1, 1, 20}, 4, 50})->numParams(), 60228);
  const auto& l1 = m->blocks()[1];
  ASSERT_EQ(l1.tensors.size(), 4u);
  EXPECT_EQ(l1.tensors[0].name, "lstm1.w_ih");
  EXPECT_EQ(l1.tensors[3].name, "lstm1.b_hh");
  c.lstmLayers = 3;
  c.lstmHidden = 16;
  c.embedDim = 8;
  auto m3 = buildModel<float>(c, InputSpec{Shape{1, 1, 10}, 3, 20});
  EXPECT_EQ(blockNames(*m3), (std::vector<std::string>{"embed", "lstm1", "lstm2", "lstm3", "fc1"}));
}

TEST(Presets, BlocksTileTheBufferInOrder) {
  for (const auto& name : modelPresetNames()) {
    SCOPED_TRACE(name);
    const InputSpec in = name == "lstm" || name == "transformer_playerfl" ? InputSpec{Shape{1, 1, 12}, 4, 30} : kFashion;
    auto m = buildModel<float>(preset(name), in);
    Index off = 0;
    for (const auto& b : m->blocks()) {
      EXPECT_EQ(b.offset, off);
      Index t = b.offset;
      for (const auto& tensor : b.tensors) {
        EXPECT_EQ(tensor.offset, t);
        t += tensor.size;
      }
      EXPECT_EQ(t, b.offset + b.size);
      off += b.size;
    }
    EXPECT_EQ(off, m->numParams());
  }
}

// Expects a ConfigError whose message contains every fragment.
void expectConfigError(const ModelConfig& c, const InputSpec& in, std::vector<std::string> fragments) {
  try {
    buildModel<float>(c, in);
    ADD_FAILURE() << "no error for model " << c.name;
  } catch (const ConfigError& e) {
    for (const auto& f : fragments) EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
  }
}

TEST(Presets, InputThatDoesNotFitIsAConfigError) {
  expectConfigError(preset("cnn_mcmahan"), kTabular, {"cnn_mcmahan", "784x1x1"});
  expectConfigError(preset("cnn_mcmahan"), InputSpec{Shape{1, 3, 28}, 10, 0}, {"cnn_mcmahan", "1x3x28"});
  expectConfigError(preset("cnn_playerfl"), InputSpec{Shape{1, 6, 6}, 10, 0}, {"cnn_playerfl", "1x6x6"});
  expectConfigError(preset("lstm"), kFashion, {"lstm", "vocabulary"});
  expectConfigError(preset("mlp"), InputSpec{Shape{784, 1, 1}, 1, 0}, {"1 classes"});
  ModelConfig d = preset("logreg");
  d.dropout = 0.5;
  expectConfigError(d, kTabular, {"logreg", "dropout"});
  ModelConfig bad = preset("mlp");
  bad.dropout = 1.0;
  expectConfigError(bad, kTabular, {"dropout"});
  ModelConfig gamma = preset("mlp");
  gamma.loss = LossKind::Focal;
  gamma.focalGamma = -1;
  expectConfigError(gamma, kTabular, {"focal"});
  ModelConfig l0 = preset("lstm");
  l0.lstmLayers = 0;
  expectConfigError(l0, InputSpec{Shape{1, 1, 5}, 2, 10}, {"lstm_layers"});
}

TEST(Presets, FloatAndDoubleAgree) {
  for (const auto& name : modelPresetNames()) {
    SCOPED_TRACE(name);
    const bool tokens = name == "lstm" || name == "transformer_playerfl";
    const InputSpec in = tokens ? InputSpec{Shape{1, 1, 7}, 4, 9} : InputSpec{Shape{2, 12, 12}, 4, 0};
    auto mf = buildModel<float>(preset(name), in);
    auto md = buildModel<double>(preset(name), in);
    Rng rng(3, -1, -1, Purpose::Init);
    md->initialize(rng);
    for (Index i = 0; i < md->numParams(); ++i) mf->params()[i] = static_cast<float>(md->params()[i]);
    const int batch = 3;
    std::vector<double> xd = randomVector(static_cast<std::size_t>(in.shape.size()) * batch, 4, 0.0, 1.0);
    if (tokens)
      for (std::size_t i = 0; i < xd.size(); ++i) xd[i] = static_cast<double>(i % 9);
    std::vector<float> xf(xd.begin(), xd.end());
    const std::vector<std::int32_t> y = {0, 3, 1};
    mf->reserve(batch);
    md->reserve(batch);
    const double lf = mf->lossAndGradient(xf.data(), y.data(), batch);
    const double ld = md->lossAndGradient(xd.data(), y.data(), batch);
    EXPECT_TRUE(std::isfinite(ld));
    EXPECT_NEAR(lf, ld, 1e-4 * std::max(1.0, std::abs(ld)));
    double gmax = 0, diff = 0;
    for (Index i = 0; i < md->numParams(); ++i) {
      gmax = std::max(gmax, std::abs(md->grads()[i]));
      diff = std::max(diff, std::abs(md->grads()[i] - mf->grads()[i]));
    }
    EXPECT_GT(gmax, 0.0);
    EXPECT_LT(diff, 1e-3 * gmax);
  }
}

// Whole-model finite differences on tiny inputs (sampled entries for the big tensors).
GradCheckResult checkPreset(const ModelConfig& c, const InputSpec& in, int batch, std::uint64_t seed,
                            const GradCheckOptions& opt) {
  auto m = buildModel<double>(c, in);
  Rng rng(seed, -1, -1, Purpose::Init);
  m->initialize(rng);
  // Small non-zero biases: a misrouted bias gradient then shows up.
  for (const auto& b : m->blocks())
    for (const auto& t : b.tensors)
      if (t.isBias)
        for (Index i = 0; i < t.size; ++i) m->params()[t.offset + i] = 0.05 * rng.uniform(-1.0, 1.0);
  std::vector<double> x = randomVector(static_cast<std::size_t>(in.shape.size()) * batch, seed + 1);
  if (in.vocabSize > 0)
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 7 + seed) % in.vocabSize);
  std::vector<std::int32_t> y(batch);
  for (int j = 0; j < batch; ++j) y[j] = (j * 5 + 1) % in.numClasses;
  return checkModelGradients(*m, x, y, batch, opt);
}

TEST(PresetGradients, MlpWithDropoutAndEachLoss) {
  ModelConfig c = preset("mlp");
  c.hidden = {5, 4};
  c.dropout = 0.2;
  for (const LossKind loss : {LossKind::CrossEntropy, LossKind::Hinge, LossKind::Focal}) {
    SCOPED_TRACE(nameOf(loss));
    c.loss = loss;
    GradCheckOptions opt;
    EXPECT_GRADIENTS_OK(checkPreset(c, InputSpec{Shape{6, 1, 1}, 3, 0}, 4, 11, opt), opt);
  }
}

TEST(PresetGradients, LogregAndSvm) {
  GradCheckOptions opt;
  EXPECT_GRADIENTS_OK(checkPreset(preset("logreg"), InputSpec{Shape{5, 1, 1}, 3, 0}, 4, 12, opt), opt);
  EXPECT_GRADIENTS_OK(checkPreset(preset("svm"), InputSpec{Shape{5, 1, 1}, 4, 0}, 4, 13, opt), opt);
}

TEST(PresetGradients, CnnMcMahan) {
  GradCheckOptions opt;
  opt.maxPerTensor = 25;
  EXPECT_GRADIENTS_OK(checkPreset(preset("cnn_mcmahan"), InputSpec{Shape{1, 8, 8}, 3, 0}, 2, 14, opt), opt);
  ModelConfig d = preset("cnn_mcmahan");
  d.dropout = 0.3;
  opt.maxInputs = 60;
  EXPECT_GRADIENTS_OK(checkPreset(d, InputSpec{Shape{2, 9, 7}, 3, 0}, 2, 15, opt), opt);
}

TEST(PresetGradients, CnnPlayerFl) {
  GradCheckOptions opt;
  opt.maxPerTensor = 15;
  opt.maxInputs = 40;
  EXPECT_GRADIENTS_OK(checkPreset(preset("cnn_playerfl"), InputSpec{Shape{1, 8, 8}, 3, 0}, 2, 16, opt), opt);
}

TEST(PresetGradients, CnnPlayerFlCifar) {
  // Five padded 3x3 convolutions, two pools, the dropout after each block and the global average pool.
  GradCheckOptions opt;
  opt.maxPerTensor = 6;
  opt.maxInputs = 20;
  EXPECT_GRADIENTS_OK(checkPreset(preset("cnn_playerfl_cifar"), InputSpec{Shape{3, 4, 5}, 3, 0}, 2, 18, opt), opt);
}

TEST(PresetGradients, Lstm) {
  ModelConfig c = preset("lstm");
  c.embedDim = 3;
  c.lstmHidden = 4;
  for (int layers : {1, 2}) {
    SCOPED_TRACE(layers);
    c.lstmLayers = layers;
    GradCheckOptions opt;
    opt.checkInput = false;  // token ids
    EXPECT_GRADIENTS_OK(checkPreset(c, InputSpec{Shape{1, 1, 4}, 3, 6}, 3, 17, opt), opt);
  }
}

}  // namespace
}  // namespace fedsilo::test
