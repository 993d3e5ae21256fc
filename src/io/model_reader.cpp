#include "io/model_reader.hpp"

#include <filesystem>
#include <optional>

#include "core/error.hpp"
#include "core/h5_handle.hpp"
#include "io/checksum.hpp"
#include "io/h5_attributes.hpp"

namespace fedsilo {

namespace {

// A 1-D dataset's size, DataError when it is not 1-D.
hsize_t length1d(hid_t dataset, const std::string& file, const std::string& path) {
  h5::Handle space(H5Dget_space(dataset), H5Sclose, "space " + path);
  hsize_t n = 0;
  if (H5Sget_simple_extent_ndims(space) != 1)
    throw DataError(fmt("model.init = ", file, ": ", path, " is not a 1-D array"));
  H5Sget_simple_extent_dims(space, &n, nullptr);
  return n;
}

template <typename T>
std::vector<T> readNumbers(hid_t file, const std::string& fileName, const std::string& path, hid_t memType) {
  h5::Handle d(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose, "open " + path);
  std::vector<T> v(static_cast<std::size_t>(length1d(d, fileName, path)));
  if (!v.empty()) h5::check(H5Dread(d, memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "read " + path);
  return v;
}

// Variable-length strings (the results writer's) read as char* that HDF5 allocates and reclaims.
// The memory type takes the file's character set: HDF5 does not convert between UTF-8 and ASCII.
std::vector<std::string> readVariableStrings(hid_t d, hid_t fileType, const std::string& path, std::size_t n) {
  h5::Handle memType(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
  h5::check(H5Tset_size(memType, H5T_VARIABLE), "H5Tset_size");
  h5::check(H5Tset_cset(memType, H5Tget_cset(fileType)), "H5Tset_cset");
  std::vector<char*> ptrs(n, nullptr);
  std::vector<std::string> out;
  if (n == 0) return out;
  h5::check(H5Dread(d, memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()), "read " + path);
  for (const char* p : ptrs) out.emplace_back(p ? p : "");
  h5::Handle space(H5Dget_space(d), H5Sclose, "space " + path);
  H5Dvlen_reclaim(memType, space, H5P_DEFAULT, ptrs.data());
  return out;
}

std::vector<std::string> readStrings(hid_t file, const std::string& fileName, const std::string& path) {
  h5::Handle d(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose, "open " + path);
  h5::Handle type(H5Dget_type(d), H5Tclose, "type " + path);
  if (H5Tget_class(type) != H5T_STRING)
    throw DataError(fmt("model.init = ", fileName, ": ", path, " is not an array of strings"));
  const std::size_t n = length1d(d, fileName, path);
  if (H5Tis_variable_str(type) > 0) return readVariableStrings(d, type, path, n);
  const std::size_t len = H5Tget_size(type);
  std::vector<char> buf(std::max<std::size_t>(len * n, 1), '\0');
  if (n > 0) h5::check(H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), "read " + path);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) {
    std::string s(buf.data() + i * len, len);
    s.erase(s.find_last_not_of('\0') + 1);
    out.push_back(s);
  }
  return out;
}

// The checkpoint's global model: the layer table of its root attributes, the checksum of the array.
void readCheckpointModel(hid_t file, const std::string& path, StoredModel& m) {
  const std::optional<std::string> text = h5::fixedStringAttribute(file, "model_layers");
  if (!text || !parseLayerTable(*text, m.layers))
    throw DataError(fmt("model.init = ", path, ": a checkpoint without a readable layer table (root attribute ",
                        "model_layers; checkpoints of fedsilo-checkpoint-3 and older have none): use the run's ",
                        "results file"));
  m.params = readNumbers<float>(file, path, m.dataset, H5T_NATIVE_FLOAT);
  h5::Handle d(H5Dopen2(file, m.dataset.c_str(), H5P_DEFAULT), H5Dclose, "open " + m.dataset);
  if (h5::integerAttribute(d, "crc32c") != static_cast<std::int64_t>(crc32cOf(m.params)))
    throw DataError(fmt("model.init = ", path, ": ", m.dataset, " does not match its checksum (the checkpoint is ",
                        "damaged)"));
}

}  // namespace

std::string layerTableText(const LayerTable& table) {
  FEDSILO_ASSERT(table.names.size() == table.sizes.size());
  std::string text;
  for (std::size_t b = 0; b < table.names.size(); ++b) text += fmt(table.names[b], ' ', table.sizes[b], '\n');
  return text;
}

bool parseLayerTable(const std::string& text, LayerTable& table) {
  table = LayerTable{};
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const std::size_t space = line.rfind(' ');
    if (space == std::string::npos || space == 0 || space + 1 == line.size()) return false;
    const std::string number = line.substr(space + 1);
    if (number.size() > 18 || number.find_first_not_of("0123456789") != std::string::npos) return false;
    table.names.push_back(line.substr(0, space));
    table.sizes.push_back(std::stoll(number));
  }
  return !table.names.empty();
}

StoredModel readStoredModel(const std::string& path) {
  const h5::QuietErrors quiet;  // a bad file gets our one-line DataError, not HDF5's error stack
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw DataError(fmt("model.init = ", path, ": no such file (expected a fedsilo results file or checkpoint)"));
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0)
    throw DataError(
        fmt("model.init = ", path, ": cannot open it as HDF5 (expected a fedsilo results file or checkpoint)"));
  h5::Handle file(f, H5Fclose, "open " + path);
  StoredModel m;
  if (h5::pathExists(file, "/model/global")) {
    m.dataset = "/model/global";
    if (!h5::pathExists(file, "/model/layers/name") || !h5::pathExists(file, "/model/layers/size"))
      throw DataError(fmt("model.init = ", path, ": /model/global without its layer table /model/layers"));
    m.layers.names = readStrings(file, path, "/model/layers/name");
    m.layers.sizes = readNumbers<std::int64_t>(file, path, "/model/layers/size", H5T_NATIVE_INT64);
    m.params = readNumbers<float>(file, path, m.dataset, H5T_NATIVE_FLOAT);
  } else if (h5::pathExists(file, "/replicated/driver/global")) {
    m.dataset = "/replicated/driver/global";
    readCheckpointModel(file, path, m);
  } else {
    throw DataError(fmt("model.init = ", path, ": holds neither /model/global (a finished results file) nor ",
                        "/replicated/driver/global (a checkpoint)"));
  }
  return m;
}

void checkStoredModel(const StoredModel& stored, const std::string& path, const LayerTable& configured) {
  const LayerTable& file = stored.layers;
  if (file.names.size() != configured.names.size())
    throw ConfigError(fmt("model.init = ", path, ": the stored model has ", file.names.size(),
                          " layer blocks, the configured model ", configured.names.size()));
  for (std::size_t b = 0; b < configured.names.size(); ++b)
    if (file.names[b] != configured.names[b] || b >= file.sizes.size() || file.sizes[b] != configured.sizes[b])
      throw ConfigError(fmt("model.init = ", path, ": layer block ", b, " is ", file.names[b], " (",
                            b < file.sizes.size() ? file.sizes[b] : -1, " parameters) in the file, but ",
                            configured.names[b], " (", configured.sizes[b], " parameters) in the configured model"));
  std::int64_t total = 0;
  for (std::int64_t s : configured.sizes) total += s;
  if (static_cast<std::int64_t>(stored.params.size()) != total)
    throw ConfigError(fmt("model.init = ", path, ": ", stored.dataset, " holds ", stored.params.size(),
                          " parameters, the configured model has ", total));
}

}  // namespace fedsilo
