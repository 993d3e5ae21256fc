// model.init = FILE: the initial global model from a finished fedsilo results file (/model/global,
// with its layer table /model/layers/{name,size}) or a checkpoint (<output>.ckpt: the global model
// of the round it was taken after, /replicated/driver/global, with its layer table in the root
// attribute model_layers).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fedsilo {

// A model's layer blocks in order: their names and parameter counts.
struct LayerTable {
  std::vector<std::string> names;
  std::vector<std::int64_t> sizes;
};

// The layer table as checkpoints store it: one "name size" line per block, in order.
std::string layerTableText(const LayerTable& table);
// Parses layerTableText's format; false (and `table` unspecified) when a line is not "name size".
bool parseLayerTable(const std::string& text, LayerTable& table);

struct StoredModel {
  std::vector<float> params;
  LayerTable layers;
  std::string dataset;  // the dataset read ("/model/global" or "/replicated/driver/global")
};

// Reads the model stored in `path`. DataError (exit 3) naming the file when it is missing, not
// HDF5, holds neither dataset, lacks the layer table, or (a checkpoint) its model does not match
// the checkpoint's checksum.
StoredModel readStoredModel(const std::string& path);

// Checks `stored` against a model of these layer blocks (names and sizes in order). ConfigError
// (exit 2) naming the file and the first difference otherwise.
void checkStoredModel(const StoredModel& stored, const std::string& path, const LayerTable& configured);

}  // namespace fedsilo
