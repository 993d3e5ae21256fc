// Model presets (`model = ...`): built from the typed ModelConfig and the dataset's input shape.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "nn/model.hpp"

namespace fedsilo {

// What a preset needs to know about the data.
struct InputSpec {
  Shape shape;          // per-sample input shape
  int numClasses = 0;
  int vocabSize = 0;    // token datasets (lstm): number of token ids; 0 otherwise
};

// Builds, finalises (flat buffer allocated) but does not initialise the model. Throws ConfigError
// for an unknown preset or a preset that does not fit the input (e.g. a CNN on tabular data).
template <typename T>
std::unique_ptr<ModelT<T>> buildModel(const ModelConfig& cfg, const InputSpec& input);

// Names of all presets (from the one table of ModelPreset, core/config.hpp).
std::vector<std::string> modelPresetNames();
// The loss a preset trains with unless model.loss says otherwise: svm hinge, the others cross-entropy.
LossKind defaultLoss(ModelPreset preset);

}  // namespace fedsilo
