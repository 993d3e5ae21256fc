// The option table's row type, and the tables of the client-protocol options (the client optimizer and
// the lr schedule, the initial model, the input pipeline), which the configuration parser lists after
// their sections' other options.
#pragma once
#include <string>
#include <vector>

namespace fedsilo {

// One option: its key (section.name), its default as text (empty: none) and its --help line.
struct Opt {
  std::string key;
  std::string def;
  std::string help;
};

// train.optimizer, its coefficients, train.optimizer_state and the lr schedule (after the train options).
std::vector<Opt> optimizerOptions();
// model.init_scheme, model.init_bias, model.init (after the model options).
std::vector<Opt> initOptions();
// data.limit, data.normalize and its constants, data.augment and its settings (after the data options).
std::vector<Opt> inputOptions();

}  // namespace fedsilo
