#include "nn/presets.hpp"

#include "core/error.hpp"
#include "nn/dense.hpp"

namespace fedsilo {

namespace {

template <typename T>
std::unique_ptr<ModelT<T>> buildMlp(const ModelConfig& cfg, const InputSpec& in) {
  auto m = std::make_unique<ModelT<T>>(in.shape, in.numClasses);
  int width = in.shape.size();
  int idx = 1;
  for (int h : cfg.hidden) {
    if (h <= 0) throw ConfigError(fmt("model.hidden: width ", h, " must be positive"));
    m->add(std::make_unique<DenseT<T>>(width, h), "fc" + std::to_string(idx++));
    m->add(std::make_unique<ReluT<T>>(Shape{h, 1, 1}));
    width = h;
  }
  m->add(std::make_unique<DenseT<T>>(width, in.numClasses), "fc" + std::to_string(idx));
  return m;
}

}  // namespace

std::vector<std::string> modelPresetNames() { return {"mlp"}; }

template <typename T>
std::unique_ptr<ModelT<T>> buildModel(const ModelConfig& cfg, const InputSpec& input) {
  if (input.numClasses < 2) throw ConfigError(fmt("dataset has ", input.numClasses, " classes, expected at least 2"));
  std::unique_ptr<ModelT<T>> m;
  if (cfg.name == "mlp") {
    m = buildMlp<T>(cfg, input);
  } else {
    std::string names;
    for (const auto& n : modelPresetNames()) names += (names.empty() ? "" : ", ") + n;
    throw ConfigError(fmt("model = ", cfg.name, ": unknown model, expected one of ", names));
  }
  if (!cfg.loss.empty()) m->setLoss(makeLoss<T>(cfg.loss, cfg.focalGamma));
  m->finalize();
  return m;
}

template std::unique_ptr<ModelT<float>> buildModel<float>(const ModelConfig&, const InputSpec&);
template std::unique_ptr<ModelT<double>> buildModel<double>(const ModelConfig&, const InputSpec&);

template <typename T>
std::unique_ptr<LossT<T>> makeLoss(const std::string& name, double) {
  if (name == "cross_entropy") return std::make_unique<SoftmaxCrossEntropyT<T>>();
  throw ConfigError(fmt("model.loss = ", name, ": unknown loss, expected cross_entropy"));
}
template std::unique_ptr<LossT<float>> makeLoss<float>(const std::string&, double);
template std::unique_ptr<LossT<double>> makeLoss<double>(const std::string&, double);

}  // namespace fedsilo
