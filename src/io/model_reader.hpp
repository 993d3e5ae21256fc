// model.init = FILE: the initial global model from a finished fedsilo results file (/model/global,
// with its layer table /model/layers/{name,size}) or a checkpoint (<output>.ckpt: the global model
// of the round it was taken after, /replicated/driver/global, which carries no layer table).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fedsilo {

struct StoredModel {
  std::vector<float> params;
  std::vector<std::string> layerNames;  // empty for a checkpoint
  std::vector<std::int64_t> layerSizes;
  std::string dataset;                  // the dataset read ("/model/global" or "/replicated/driver/global")
};

// Reads the model stored in `path`. DataError (exit 3) naming the file when it is missing, not
// HDF5, or holds neither dataset.
StoredModel readStoredModel(const std::string& path);

// Checks `stored` against a model of these layer blocks (names and sizes in order; a checkpoint:
// the total size only). ConfigError (exit 2) naming the file and the first difference otherwise.
void checkStoredModel(const StoredModel& stored, const std::string& path, const std::vector<std::string>& names,
                      const std::vector<std::int64_t>& sizes);

}  // namespace fedsilo
