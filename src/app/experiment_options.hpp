// The experiment's options (every key outside the algorithms' and privacy's own tables), with their
// defaults as text and their --help lines, in --help's order: what runs, local training and its
// protocol, partition, data and inputs, model and initialisation, federation, evaluation, outputs,
// checkpoints. The configuration parser registers them; docs/cli.md lists them.
#pragma once
#include <vector>

#include "app/protocol_options.hpp"

namespace fedsilo {

const std::vector<Opt>& experimentOptions();

}  // namespace fedsilo
