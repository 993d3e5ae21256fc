// HDF5 tabular / image data (data.file), read serially with the default file-access property list:
// every rank reads the whole file itself, as it loads every other dataset (docs/architecture.md), so
// no collective calls are involved and the parallel HDF5 build behaves like the serial one.
//  * X       n x F (-> shape {F,1,1}), n x H x W (-> {1,H,W}) or n x C x H x W; float (any float
//            width, read as float32) or uint8 (kept as uint8, scaled by 1/255 when gathered).
//  * y       n integers (any integer type) in [0, data.max_classes); numClasses = max label + 1
//            (train and test).
//  * client  optional, n integers: natural partition, distinct values mapped to 0..K-1 in order.
//  * X_test / y_test  optional, both or neither (client_test optional with them); without them the
//            last 20% of a seeded shuffle of the rows is held out as for CSV (detail::holdOutTest).
// Features are used as stored (no standardisation: an HDF5 file is expected to be preprocessed); every
// float feature must be finite (a NaN or Inf is reported with its index, X[row, column...]).
#include <algorithm>
#include <climits>
#include <cmath>

#include "core/error.hpp"
#include "core/h5_handle.hpp"
#include "core/memory.hpp"
#include "data/loader_util.hpp"

namespace fedsilo::detail {

namespace {

using h5::Handle;

struct Array {
  std::vector<hsize_t> dims;
  H5T_class_t cls = H5T_NO_CLASS;
  std::size_t typeSize = 0;
  H5T_sign_t sign = H5T_SGN_NONE;
};

bool exists(hid_t file, const char* name) { return H5Lexists(file, name, H5P_DEFAULT) > 0; }

Array describe(hid_t ds, const std::string& path, const char* name) {
  Array a;
  const Handle space = Handle::adopt(H5Dget_space(ds), H5Sclose);
  const Handle type = Handle::adopt(H5Dget_type(ds), H5Tclose);
  if (!space.valid() || !type.valid())
    throw DataError(fmt("'", path, "': cannot read the shape/type of dataset '", name, "'"));
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) throw DataError(fmt("'", path, "': dataset '", name, "' has no simple dataspace"));
  a.dims.resize(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(space, a.dims.data(), nullptr);
  a.cls = H5Tget_class(type);
  a.typeSize = H5Tget_size(type);
  if (a.cls == H5T_INTEGER) a.sign = H5Tget_sign(type);
  return a;
}

std::string dimsText(const std::vector<hsize_t>& dims) {
  std::string s;
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? " x " : "") + std::to_string(dims[i]);
  return s;
}

hid_t openDataset(hid_t file, const std::string& path, const char* name) {
  const hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
  if (ds < 0) throw DataError(fmt("'", path, "': cannot open dataset '", name, "'"));
  return ds;
}

void readAll(hid_t ds, hid_t memType, void* buf, const std::string& path, const char* name) {
  if (H5Dread(ds, memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
    throw DataError(fmt("'", path, "': reading dataset '", name, "' failed"));
}

// The first non-finite value of X (row-major, dims as in the file) as "'path': X[17, 3]: nan ...".
void requireFinite(const std::vector<float>& values, const std::vector<hsize_t>& dims, const std::string& path,
                   const char* name) {
  const auto bad = std::find_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); });
  if (bad == values.end()) return;
  std::vector<hsize_t> index(dims.size());
  std::size_t flat = static_cast<std::size_t>(bad - values.begin());
  for (std::size_t d = dims.size(); d-- > 0;) {
    index[d] = flat % dims[d];
    flat /= dims[d];
  }
  std::string at;
  for (std::size_t d = 0; d < index.size(); ++d) at += (d ? ", " : "") + std::to_string(index[d]);
  badFeature(fmt("'", path, "': ", name, "[", at, "] (row ", index[0], ")"), *bad);
}

// Reads features X (or X_test) into ds; returns the number of samples.
hsize_t readFeatures(hid_t file, const std::string& path, const char* name, Dataset& out) {
  const Handle ds = Handle::adopt(openDataset(file, path, name), H5Dclose);
  const Array a = describe(ds, path, name);
  if (a.dims.size() < 2 || a.dims.size() > 4)
    throw DataError(fmt("'", path, "': dataset '", name, "' has shape ", dimsText(a.dims),
                        "; expected n x features, n x H x W or n x C x H x W"));
  std::uint64_t perSample = 1;
  for (std::size_t d = 1; d < a.dims.size(); ++d) {
    if (a.dims[d] == 0 || a.dims[d] > 0x7fffffff)
      throw DataError(fmt("'", path, "': dataset '", name, "' has an invalid sample shape ", dimsText(a.dims)));
    perSample *= a.dims[d];
    if (perSample > static_cast<std::uint64_t>(INT_MAX))
      throw DataError(fmt("'", path, "': dataset '", name, "' has shape ", dimsText(a.dims),
                          ": more than 2^31 - 1 values per sample"));
  }
  if (a.dims.size() == 2)
    out.shape = Shape{static_cast<int>(a.dims[1]), 1, 1};
  else if (a.dims.size() == 3)
    out.shape = Shape{1, static_cast<int>(a.dims[1]), static_cast<int>(a.dims[2])};
  else
    out.shape = Shape{static_cast<int>(a.dims[1]), static_cast<int>(a.dims[2]), static_cast<int>(a.dims[3])};
  // A dataset may declare any size without storing it (unallocated chunks read as the fill value), so
  // the size is checked against memory before the buffer is made.
  const std::uint64_t total = a.dims[0] > UINT64_MAX / perSample ? UINT64_MAX : a.dims[0] * perSample;
  const std::string what = fmt("dataset '", name, "' of '", path, "' (", dimsText(a.dims), " values)");
  if (a.cls == H5T_FLOAT) {
    allocateOrFail(what, bytesOf<float>(total), [&] { out.f32.resize(static_cast<std::size_t>(total)); });
    if (total) readAll(ds, H5T_NATIVE_FLOAT, out.f32.data(), path, name);
    requireFinite(out.f32, a.dims, path, name);
  } else if (a.cls == H5T_INTEGER && a.typeSize == 1 && a.sign == H5T_SGN_NONE) {
    allocateOrFail(what, total, [&] { out.u8.resize(static_cast<std::size_t>(total)); });
    if (total) readAll(ds, H5T_NATIVE_UCHAR, out.u8.data(), path, name);
  } else {
    throw DataError(fmt("'", path, "': dataset '", name, "' must hold floats or uint8, got an HDF5 type of class ",
                        static_cast<int>(a.cls), " and size ", a.typeSize));
  }
  return a.dims[0];
}

// Reads a 1-D integer dataset of length n.
std::vector<std::int64_t> readInts(hid_t file, const std::string& path, const char* name, hsize_t n) {
  const Handle ds = Handle::adopt(openDataset(file, path, name), H5Dclose);
  const Array a = describe(ds, path, name);
  const bool column = a.dims.size() == 2 && a.dims[1] == 1;  // n x 1 is accepted as well
  if (!(a.dims.size() == 1 || column) || a.dims[0] != n)
    throw DataError(fmt("'", path, "': dataset '", name, "' has shape ", dimsText(a.dims), "; expected ", n,
                        " values (one per sample)"));
  if (a.cls != H5T_INTEGER)
    throw DataError(fmt("'", path, "': dataset '", name, "' must hold integers"));
  if (a.sign == H5T_SGN_NONE && a.typeSize >= 8)
    throw DataError(fmt("'", path, "': dataset '", name, "' is uint64; use a signed or narrower integer type"));
  std::vector<std::int64_t> out;
  allocateOrFail(fmt("dataset '", name, "' of '", path, "' (", n, " integers)"), bytesOf<std::int64_t>(n),
                 [&] { out.resize(static_cast<std::size_t>(n)); });
  if (n) readAll(ds, H5T_NATIVE_INT64, out.data(), path, name);
  return out;
}

std::vector<std::int32_t> toLabels(const std::vector<std::int64_t>& v, const std::string& path, const char* name,
                                   int maxClasses) {
  std::vector<std::int32_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!validClassId(v[i], maxClasses)) badClassId(v[i], maxClasses, fmt("'", path, "': ", name, "[", i, "]"));
    out[i] = static_cast<std::int32_t>(v[i]);
  }
  return out;
}

}  // namespace

DataBundle loadHdf5(const DataConfig& cfg, std::uint64_t seed) {
  if (cfg.file.empty()) throw ConfigError("data.file is required for dataset 'hdf5'");
  requireFile(cfg.file, "HDF5");
  const std::string& path = cfg.file;
  const h5::QuietErrors quiet;  // failures become DataErrors with our own message
  if (H5Fis_hdf5(path.c_str()) <= 0) throw DataError(fmt("'", path, "' is not an HDF5 file"));
  const Handle file = Handle::adopt(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) throw DataError(fmt("cannot open HDF5 file '", path, "'"));
  for (const char* required : {"X", "y"})
    if (!exists(file, required)) throw DataError(fmt("'", path, "': missing dataset '", required, "'"));
  const bool hasXTest = exists(file, "X_test"), hasYTest = exists(file, "y_test");
  if (hasXTest != hasYTest)
    throw DataError(fmt("'", path, "': X_test and y_test must be given together (found only ",
                        hasXTest ? "X_test" : "y_test", ")"));

  DataBundle b;
  b.name = "hdf5";
  const hsize_t n = readFeatures(file, path, "X", b.train);
  if (n == 0) throw DataError(fmt("'", path, "': dataset 'X' holds no samples"));
  b.train.labels = toLabels(readInts(file, path, "y", n), path, "y", cfg.maxClasses);
  std::vector<std::int64_t> client, clientTest;
  if (exists(file, "client")) client = readInts(file, path, "client", n);
  if (hasXTest) {
    const hsize_t nt = readFeatures(file, path, "X_test", b.test);
    if (!(b.test.shape == b.train.shape) || b.test.isU8() != b.train.isU8())
      throw DataError(fmt("'", path, "': X_test's sample shape or type differs from X's"));
    b.test.labels = toLabels(readInts(file, path, "y_test", nt), path, "y_test", cfg.maxClasses);
    if (exists(file, "client_test")) {
      if (client.empty()) throw DataError(fmt("'", path, "': 'client_test' given without 'client'"));
      clientTest = readInts(file, path, "client_test", nt);
    }
  }
  int classes = 0;
  for (auto y : b.train.labels) classes = std::max(classes, y + 1);
  for (auto y : b.test.labels) classes = std::max(classes, y + 1);
  b.train.numClasses = classes;
  b.test.numClasses = classes;
  if (!client.empty()) {
    // Map train and test client values together so that both use the same ids.
    std::vector<std::int64_t> all(client);
    all.insert(all.end(), clientTest.begin(), clientTest.end());
    int k = 0;
    std::vector<std::int32_t> ids = denseIds(all, &k);
    b.naturalClient.assign(ids.begin(), ids.begin() + static_cast<long>(client.size()));
    b.naturalClientTest.assign(ids.begin() + static_cast<long>(client.size()), ids.end());
    b.numNaturalClients = k;
  }
  if (!hasXTest) holdOutTest(b, seed);
  if (b.train.isU8()) b.train.u8Scale = b.test.u8Scale = 1.0f / 255.0f;
  return b;
}

}  // namespace fedsilo::detail
