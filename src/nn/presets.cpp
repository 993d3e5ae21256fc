#include "nn/presets.hpp"

#include "core/error.hpp"
#include "nn/conv2d.hpp"
#include "nn/dense.hpp"
#include "nn/dropout.hpp"
#include "nn/embedding.hpp"
#include "nn/feed_forward.hpp"
#include "nn/first_token.hpp"
#include "nn/lstm.hpp"
#include "nn/pool.hpp"
#include "nn/self_attention.hpp"
#include "nn/token_position_embedding.hpp"

namespace fedsilo {

namespace {

std::string shapeText(const Shape& s) { return fmt(s.c, "x", s.h, "x", s.w); }

// Appends ReLU (and Dropout when cfg.dropout > 0) after a hidden layer of the given output shape.
template <typename T>
void addActivation(ModelT<T>& m, const ModelConfig& cfg, Shape shape) {
  m.add(std::make_unique<ReluT<T>>(shape));
  if (cfg.dropout > 0.0) m.add(std::make_unique<DropoutT<T>>(shape, cfg.dropout));
}

template <typename T>
std::unique_ptr<ModelT<T>> buildMlp(const ModelConfig& cfg, const InputSpec& in) {
  auto m = std::make_unique<ModelT<T>>(in.shape, in.numClasses);
  int width = in.shape.size();
  int idx = 1;
  for (int h : cfg.hidden) {
    if (h <= 0) throw ConfigError(fmt("model.hidden: width ", h, " must be positive"));
    m->add(std::make_unique<DenseT<T>>(width, h), "fc" + std::to_string(idx++));
    addActivation(*m, cfg, Shape{h, 1, 1});
    width = h;
  }
  m->add(std::make_unique<DenseT<T>>(width, in.numClasses), "fc" + std::to_string(idx));
  return m;
}

// PLayer-FL's heart-disease model (the authors' code/models.py, class Heart): fc 50, 20, 20 with ReLU,
// then the classes; the input width is the data's (10 features, or FLamby's 13).
template <typename T>
std::unique_ptr<ModelT<T>> buildHeartMlp(const ModelConfig& cfg, const InputSpec& in) {
  ModelConfig widths = cfg;
  widths.hidden = {50, 20, 20};
  return buildMlp<T>(widths, in);
}

// logreg and svm: one dense layer from the (flattened) input to the classes.
template <typename T>
std::unique_ptr<ModelT<T>> buildLinear(const ModelConfig& cfg, const InputSpec& in) {
  if (cfg.dropout > 0.0)
    throw ConfigError(fmt("model = ", cfg.name, ": model.dropout = ", cfg.dropout,
                          " has no effect, the model has no hidden layer (set it to 0)"));
  auto m = std::make_unique<ModelT<T>>(in.shape, in.numClasses);
  m->add(std::make_unique<DenseT<T>>(in.shape.size(), in.numClasses), "fc1");
  return m;
}

// Conv(k, pad keeps the size) + ReLU + MaxPool 2x2 on `shape`, updated to the pooled shape.
template <typename T>
void addConvBlock(ModelT<T>& m, Shape& shape, int outC, int k, int pad, const std::string& name) {
  auto conv = std::make_unique<Conv2DT<T>>(shape.c, shape.h, shape.w, outC, k, 1, pad);
  shape = conv->outputShape();
  m.add(std::move(conv), name);
  m.add(std::make_unique<ReluT<T>>(shape));
  auto pool = std::make_unique<MaxPool2DT<T>>(shape.c, shape.h, shape.w, 2, 2);
  shape = pool->outputShape();
  m.add(std::move(pool));
}

template <typename T>
void requireImage(const ModelConfig& cfg, const InputSpec& in, int pools) {
  const int minSide = 1 << pools;
  if (in.shape.h < minSide || in.shape.w < minSide)
    throw ConfigError(fmt("model = ", cfg.name, ": needs an image input C x H x W with H, W >= ", minSide, " (",
                          pools, " 2x2 max-pools), but the dataset's samples are ", shapeText(in.shape)));
}

// McMahan et al. 2017 "CNN": conv5x5(32) pool conv5x5(64) pool fc512 fc(C).
template <typename T>
std::unique_ptr<ModelT<T>> buildCnnMcMahan(const ModelConfig& cfg, const InputSpec& in) {
  requireImage<T>(cfg, in, 2);
  auto m = std::make_unique<ModelT<T>>(in.shape, in.numClasses);
  Shape s = in.shape;
  addConvBlock(*m, s, 32, 5, 2, "conv1");
  addConvBlock(*m, s, 64, 5, 2, "conv2");
  m->add(std::make_unique<FlattenT<T>>(s));
  m->add(std::make_unique<DenseT<T>>(s.size(), 512), "fc1");
  addActivation(*m, cfg, Shape{512, 1, 1});
  m->add(std::make_unique<DenseT<T>>(512, in.numClasses), "fc2");
  return m;
}

// PLayer-FL's FMNIST/EMNIST model: three conv5x5 blocks (64, 128, 256), global average pool,
// fc 256->100, fc 100->C.
template <typename T>
std::unique_ptr<ModelT<T>> buildCnnPlayerFl(const ModelConfig& cfg, const InputSpec& in) {
  requireImage<T>(cfg, in, 3);
  auto m = std::make_unique<ModelT<T>>(in.shape, in.numClasses);
  Shape s = in.shape;
  addConvBlock(*m, s, 64, 5, 2, "conv1");
  addConvBlock(*m, s, 128, 5, 2, "conv2");
  addConvBlock(*m, s, 256, 5, 2, "conv3");
  m->add(std::make_unique<GlobalAvgPoolT<T>>(s.c, s.h, s.w));
  m->add(std::make_unique<DenseT<T>>(s.c, 100), "fc1");
  addActivation(*m, cfg, Shape{100, 1, 1});
  m->add(std::make_unique<DenseT<T>>(100, in.numClasses), "fc2");
  return m;
}

// PLayer-FL's CIFAR-10 model (the authors' code/models.py, class CIFAR): five 3x3 convolutions
// 3->64->128->256->512->512, each padded by 2 (so every one grows the side by 2: 32, 34, 36 -> pool 18,
// 20, 22 -> pool 11, 13), ReLU, a 2x2 max-pool after conv2 and conv4, dropout 0.3 after every block
// (theirs, not model.dropout); global average pool, fc 512->100 ReLU [, Dropout], fc 100->C.
template <typename T>
std::unique_ptr<ModelT<T>> buildCnnPlayerFlCifar(const ModelConfig& cfg, const InputSpec& in) {
  requireImage<T>(cfg, in, 2);
  constexpr double kConvDropout = 0.3;
  struct Block {
    int outC;
    bool pool;
  };
  const Block blocks[] = {{64, false}, {128, true}, {256, false}, {512, true}, {512, false}};
  auto m = std::make_unique<ModelT<T>>(in.shape, in.numClasses);
  Shape s = in.shape;
  int idx = 1;
  for (const Block& b : blocks) {
    auto conv = std::make_unique<Conv2DT<T>>(s.c, s.h, s.w, b.outC, 3, 1, 2);
    s = conv->outputShape();
    m->add(std::move(conv), "conv" + std::to_string(idx++));
    m->add(std::make_unique<ReluT<T>>(s));
    if (b.pool) {
      auto pool = std::make_unique<MaxPool2DT<T>>(s.c, s.h, s.w, 2, 2);
      s = pool->outputShape();
      m->add(std::move(pool));
    }
    m->add(std::make_unique<DropoutT<T>>(s, kConvDropout));
  }
  m->add(std::make_unique<GlobalAvgPoolT<T>>(s.c, s.h, s.w));
  m->add(std::make_unique<DenseT<T>>(s.c, 100), "fc1");
  addActivation(*m, cfg, Shape{100, 1, 1});
  m->add(std::make_unique<DenseT<T>>(100, in.numClasses), "fc2");
  return m;
}

// Token classifier: embedding, model.lstm_layers stacked LSTMs, dense on the last hidden state.
template <typename T>
std::unique_ptr<ModelT<T>> buildLstm(const ModelConfig& cfg, const InputSpec& in) {
  if (in.vocabSize <= 0)
    throw ConfigError(fmt("model = lstm: needs a token dataset (vocabulary size > 0), but the dataset's samples are ",
                          shapeText(in.shape), " feature vectors without a vocabulary"));
  if (cfg.embedDim <= 0 || cfg.lstmHidden <= 0 || cfg.lstmLayers <= 0)
    throw ConfigError(fmt("model = lstm: model.embed_dim (", cfg.embedDim, "), model.lstm_hidden (", cfg.lstmHidden,
                          ") and model.lstm_layers (", cfg.lstmLayers, ") must be positive"));
  const int seqLen = in.shape.size();
  auto m = std::make_unique<ModelT<T>>(in.shape, in.numClasses);
  m->add(std::make_unique<EmbeddingT<T>>(in.vocabSize, cfg.embedDim, seqLen), "embed");
  int width = cfg.embedDim;
  for (int l = 1; l <= cfg.lstmLayers; ++l) {
    const bool last = l == cfg.lstmLayers;
    auto lstm = std::make_unique<LstmT<T>>(width, cfg.lstmHidden, seqLen, !last);
    const Shape out = lstm->outputShape();
    m->add(std::move(lstm), "lstm" + std::to_string(l));
    if (cfg.dropout > 0.0) m->add(std::make_unique<DropoutT<T>>(out, cfg.dropout));
    width = cfg.lstmHidden;
  }
  m->add(std::make_unique<DenseT<T>>(cfg.lstmHidden, in.numClasses), "fc1");
  return m;
}

// The PLayer-FL authors' text transformer (their Sentiment/mimic models, code/models.py): token +
// learned position embedding, one single-head self-attention block with projection and residual, a
// 4d feed-forward block with residual, no LayerNorm, the first token's state into a dense head. Four
// federation blocks in model order: embedding, attention, feedforward, head.
template <typename T>
std::unique_ptr<ModelT<T>> buildTransformerPlayerFl(const ModelConfig& cfg, const InputSpec& in) {
  if (in.vocabSize <= 0)
    throw ConfigError(fmt("model = transformer_playerfl: needs a token dataset (vocabulary size > 0), but the "
                          "dataset's samples are ",
                          shapeText(in.shape), " feature vectors without a vocabulary"));
  if (cfg.dropout > 0.0)
    throw ConfigError(fmt("model = transformer_playerfl: model.dropout = ", cfg.dropout,
                          " has no effect, the authors' transformer has no dropout (set it to 0)"));
  const int seqLen = in.shape.size(), d = cfg.embedDim;
  auto mask = std::make_shared<PaddingMask>();
  auto m = std::make_unique<ModelT<T>>(in.shape, in.numClasses);
  m->add(std::make_unique<TokenPositionEmbeddingT<T>>(in.vocabSize, d, seqLen, cfg.maxLen > 0 ? cfg.maxLen : seqLen,
                                                      mask),
         "embedding");
  m->add(std::make_unique<SelfAttentionT<T>>(d, seqLen, mask), "attention");
  m->add(std::make_unique<FeedForwardT<T>>(d, 4 * d, seqLen), "feedforward");
  m->add(std::make_unique<FirstTokenT<T>>(d, seqLen));
  m->add(std::make_unique<DenseT<T>>(d, in.numClasses), "head");
  return m;
}

// The preset's own layers (no loss yet).
template <typename T>
std::unique_ptr<ModelT<T>> buildLayers(const ModelConfig& cfg, const InputSpec& input) {
  switch (cfg.name) {
    case ModelPreset::Mlp: return buildMlp<T>(cfg, input);
    case ModelPreset::Logreg:
    case ModelPreset::Svm: return buildLinear<T>(cfg, input);
    case ModelPreset::CnnMcMahan: return buildCnnMcMahan<T>(cfg, input);
    case ModelPreset::CnnPlayerFl: return buildCnnPlayerFl<T>(cfg, input);
    case ModelPreset::CnnPlayerFlCifar: return buildCnnPlayerFlCifar<T>(cfg, input);
    case ModelPreset::Lstm: return buildLstm<T>(cfg, input);
    case ModelPreset::HeartMlp: return buildHeartMlp<T>(cfg, input);
    case ModelPreset::TransformerPlayerFl: return buildTransformerPlayerFl<T>(cfg, input);
  }
  throw RuntimeError(fmt("internal error: no builder for model enumerator ", static_cast<int>(cfg.name)));
}

}  // namespace

std::vector<std::string> modelPresetNames() {
  std::vector<std::string> names;
  for (const auto& entry : enumNames<ModelPreset>()) names.push_back(entry.name);
  return names;
}

LossKind defaultLoss(ModelPreset preset) {
  return preset == ModelPreset::Svm ? LossKind::Hinge : LossKind::CrossEntropy;
}

template <typename T>
std::unique_ptr<ModelT<T>> buildModel(const ModelConfig& cfg, const InputSpec& input) {
  if (input.numClasses < 2) throw ConfigError(fmt("dataset has ", input.numClasses, " classes, expected at least 2"));
  if (input.shape.size() <= 0)
    throw ConfigError(fmt("model = ", cfg.name, ": empty input shape ", shapeText(input.shape)));
  if (!(cfg.dropout >= 0.0 && cfg.dropout < 1.0))
    throw ConfigError(fmt("model.dropout = ", cfg.dropout, ": expected a value in [0, 1)"));
  std::unique_ptr<ModelT<T>> m = buildLayers<T>(cfg, input);
  if (!cfg.focalAlpha.empty() && static_cast<int>(cfg.focalAlpha.size()) != input.numClasses)
    throw ConfigError(fmt("model.focal_alpha: ", cfg.focalAlpha.size(), " class weights, but the dataset has ",
                          input.numClasses, " classes (one weight per class)"));
  m->setLoss(makeLoss<T>(cfg.loss.value_or(defaultLoss(cfg.name)), cfg.focalGamma, cfg.focalAlpha));
  m->setInitialization(InitOptions{cfg.initScheme, cfg.initBias});
  m->finalize();
  return m;
}

template std::unique_ptr<ModelT<float>> buildModel<float>(const ModelConfig&, const InputSpec&);
template std::unique_ptr<ModelT<double>> buildModel<double>(const ModelConfig&, const InputSpec&);

}  // namespace fedsilo
