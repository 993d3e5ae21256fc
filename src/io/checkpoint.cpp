#include "io/checkpoint.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>
#include <utility>

#include "comm/h5_mpio.hpp"
#include "core/h5_handle.hpp"
#include "io/checksum.hpp"
#include "io/durable.hpp"
#include "io/h5_attributes.hpp"
#include "io/h5_ranges.hpp"
#include "io/storage_errors.hpp"

namespace fedsilo {

namespace {

// -3: every array carries a CRC-32C (attribute crc32c; per-client arrays one per client in
// /clients/<name>/crc32c), the root attributes one over all of them (info_crc32c).
// -4: the global model's layer table (root attribute model_layers).
// -5: the fingerprint of the run's inputs (data_crc32c, partition_crc32c).
constexpr const char* kFormat = "fedsilo-checkpoint-6";
constexpr const char* kCrcAttribute = "crc32c";

template <typename T>
struct H5Type;
template <>
struct H5Type<float> {
  static hid_t mem() { return H5T_NATIVE_FLOAT; }
  static hid_t file() { return H5T_IEEE_F32LE; }
};
template <>
struct H5Type<double> {
  static hid_t mem() { return H5T_NATIVE_DOUBLE; }
  static hid_t file() { return H5T_IEEE_F64LE; }
};
template <>
struct H5Type<std::int64_t> {
  static hid_t mem() { return H5T_NATIVE_INT64; }
  static hid_t file() { return H5T_STD_I64LE; }
};

void writeStringAttribute(hid_t obj, const char* name, const std::string& value) {
  h5::Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
  h5::check(H5Tset_size(type, std::max<std::size_t>(value.size(), 1)), "H5Tset_size");
  h5::check(H5Tset_strpad(type, H5T_STR_NULLPAD), "H5Tset_strpad");
  h5::Handle space(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate");
  h5::Handle a(H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
               fmt("create checkpoint attribute ", name));
  const char empty = '\0';
  h5::check(H5Awrite(a, type, value.empty() ? &empty : value.data()), fmt("write checkpoint attribute ", name));
}

void writeIntAttribute(hid_t obj, const char* name, std::int64_t value) {
  h5::Handle space(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate");
  h5::Handle a(H5Acreate2(obj, name, H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
               fmt("create checkpoint attribute ", name));
  h5::check(H5Awrite(a, H5T_NATIVE_INT64, &value), fmt("write checkpoint attribute ", name));
}

std::string readStringAttribute(hid_t obj, const std::string& file, const char* name) {
  if (H5Aexists(obj, name) <= 0) throw RuntimeError(fmt("checkpoint ", file, ": attribute '", name, "' missing"));
  if (std::optional<std::string> s = h5::fixedStringAttribute(obj, name)) return *s;
  throw RuntimeError(fmt("checkpoint ", file, ": attribute '", name, "' is not a fixed-length string"));
}

std::int64_t readIntAttribute(hid_t obj, const std::string& file, const char* name) {
  if (H5Aexists(obj, name) <= 0) throw RuntimeError(fmt("checkpoint ", file, ": attribute '", name, "' missing"));
  if (std::optional<std::int64_t> v = h5::integerAttribute(obj, name)) return *v;
  throw RuntimeError(fmt("checkpoint ", file, ": attribute '", name, "' is not an integer scalar"));
}

// "" when the closed checkpoint `file` reads back whole, else what is wrong (defined below).
std::string verifyCheckpointFile(const std::string& file);

}  // namespace

std::string checkpointPath(const std::string& output) { return output + ".ckpt"; }

struct Checkpoint::Impl {
  // First member, so it is the last to go: HDF5 stays quiet until the handles below are closed.
  h5::QuietErrors quietErrors;
  std::string file;  // the path actually open (path.tmp while writing)
  h5::Handle fileId, dxpl, lcpl;
};

namespace {

void finishImpl(Checkpoint::Impl& impl, const Communicator& comm) {
  impl.dxpl = h5::collectiveTransfer(comm);
  impl.lcpl = h5::Handle(H5Pcreate(H5P_LINK_CREATE), H5Pclose, "H5Pcreate(lcpl)");
  h5::check(H5Pset_create_intermediate_group(impl.lcpl, 1), "H5Pset_create_intermediate_group");
}

}  // namespace

Checkpoint::Checkpoint(std::unique_ptr<Impl> impl, bool saving, const Communicator& comm, const Placement& placement)
    : impl_(std::move(impl)),
      saving_(saving),
      unwindingAtCreation_(std::uncaught_exceptions()),
      comm_(comm),
      placement_(placement) {}

namespace {

// CRC-32C over every root attribute: the strings with their lengths, then the integers.
std::int64_t infoChecksum(const std::string& format, const CheckpointInfo& i) {
  std::uint32_t crc = 0;
  for (const std::string* text : {&format, &i.version, &i.config, &i.roundNames, &i.modelLayers}) {
    const std::uint64_t n = text->size();
    crc = crc32c(&n, sizeof n, crc);
    crc = crc32c(text->data(), text->size(), crc);
  }
  const std::vector<std::int64_t> numbers{i.nextRound,  i.rows,       i.partialKept, i.partialSize, i.partialCrc,
                                          i.numClients, i.numRanks,   i.dataCrc,     i.partitionCrc};
  return crc32cOf(numbers, crc);
}

void writeInfo(hid_t f, const CheckpointInfo& info) {
  writeStringAttribute(f, "format", kFormat);
  writeStringAttribute(f, "version", info.version);
  writeStringAttribute(f, "config", info.config);
  writeStringAttribute(f, "round_names", info.roundNames);
  writeStringAttribute(f, "model_layers", info.modelLayers);
  writeIntAttribute(f, "next_round", info.nextRound);
  writeIntAttribute(f, "rows", info.rows);
  writeIntAttribute(f, "partial_kept", info.partialKept);
  writeIntAttribute(f, "partial_size", info.partialSize);
  writeIntAttribute(f, "partial_crc32c", info.partialCrc);
  writeIntAttribute(f, "num_clients", info.numClients);
  writeIntAttribute(f, "num_ranks", info.numRanks);
  writeIntAttribute(f, "data_crc32c", info.dataCrc);
  writeIntAttribute(f, "partition_crc32c", info.partitionCrc);
  writeIntAttribute(f, "info_crc32c", infoChecksum(kFormat, info));
}

// The root attributes, checked against info_crc32c (not against a configuration).
CheckpointInfo readInfoAttributes(hid_t f, const std::string& path) {
  const std::string format = readStringAttribute(f, path, "format");
  // Not a checkpoint at all (a results file, another program's HDF5): unreadable as one, exit 1.
  if (format.rfind("fedsilo-checkpoint-", 0) != 0)
    throw RuntimeError(fmt("--resume: ", path, " is not a fedsilo checkpoint (its format is '", format, "')"));
  if (format != kFormat)
    throw ConfigError(fmt("--resume: ", path, " has format '", format, "', expected ", kFormat,
                          " (a checkpoint of another fedsilo version: remove it to start over)"));
  CheckpointInfo i;
  i.version = readStringAttribute(f, path, "version");
  i.config = readStringAttribute(f, path, "config");
  i.roundNames = readStringAttribute(f, path, "round_names");
  i.modelLayers = readStringAttribute(f, path, "model_layers");
  i.nextRound = readIntAttribute(f, path, "next_round");
  i.rows = readIntAttribute(f, path, "rows");
  i.partialKept = readIntAttribute(f, path, "partial_kept");
  i.partialSize = readIntAttribute(f, path, "partial_size");
  i.partialCrc = readIntAttribute(f, path, "partial_crc32c");
  i.numClients = readIntAttribute(f, path, "num_clients");
  i.numRanks = readIntAttribute(f, path, "num_ranks");
  i.dataCrc = readIntAttribute(f, path, "data_crc32c");
  i.partitionCrc = readIntAttribute(f, path, "partition_crc32c");
  if (readIntAttribute(f, path, "info_crc32c") != infoChecksum(format, i))
    throw RuntimeError(fmt("checkpoint ", path, ": its attributes do not match their checksum (the file is damaged; ",
                           "it was left as it is: remove it to start over)"));
  return i;
}

CheckpointInfo readInfo(hid_t f, const std::string& path, const Placement& placement) {
  CheckpointInfo i = readInfoAttributes(f, path);
  if (i.nextRound < 0 || i.rows < 0)
    throw RuntimeError(fmt("checkpoint ", path, ": next_round = ", i.nextRound, " and rows = ", i.rows,
                           " (expected counts >= 0)"));
  if (i.numClients != placement.numClients())
    throw ConfigError(fmt("--resume: ", path, " holds ", i.numClients, " clients, the configuration has ",
                          placement.numClients()));
  return i;
}

}  // namespace

std::unique_ptr<Checkpoint> Checkpoint::create(const std::string& path, const Communicator& comm,
                                               const Placement& placement, const CheckpointInfo& info) {
  auto impl = std::make_unique<Impl>();
  impl->file = path + ".tmp";
  // The open is the one step whose failure (directory gone, disk full, no permission) is seen by
  // every rank alike, so it is agreed on; later HDF5 errors are collective-call failures (main aborts).
  coordinated(comm, [&] {
    h5::Handle fapl = h5::parallelFileAccess(comm);
    const hid_t f = H5Fcreate(impl->file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (f < 0) throw RuntimeError(fmt("checkpoint: cannot create ", impl->file, failureReason(impl->file)));
    impl->fileId = h5::Handle(f, H5Fclose, "checkpoint file");
  });
  finishImpl(*impl, comm);
  std::unique_ptr<Checkpoint> c(new Checkpoint(std::move(impl), true, comm, placement));
  c->path_ = path;
  c->info_ = info;
  writeInfo(c->impl_->fileId, info);
  return c;
}

std::unique_ptr<Checkpoint> Checkpoint::open(const std::string& path, const Communicator& comm,
                                             const Placement& placement) {
  auto impl = std::make_unique<Impl>();
  impl->file = path;
  coordinated(comm, [&] {
    h5::Handle fapl = h5::parallelFileAccess(comm);
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl);
    if (f < 0) {
      const std::string why = failureReason(path);
      throw RuntimeError(fmt("--resume: cannot open checkpoint ", path, why.empty() ? " (not an HDF5 file?)" : why));
    }
    impl->fileId = h5::Handle(f, H5Fclose, "checkpoint file");
  });
  finishImpl(*impl, comm);
  std::unique_ptr<Checkpoint> c(new Checkpoint(std::move(impl), false, comm, placement));
  c->path_ = path;
  try {
    // Attribute reads are symmetric on every rank and fail alike; agree so the message prints once.
    coordinated(comm, [&] { c->info_ = readInfo(c->impl_->fileId, path, placement); });
  } catch (...) {
    // Every rank is here when the failure was agreed: close the file together (see ~Checkpoint).
    if (agreedFailure(std::current_exception())) c.reset();
    throw;
  }
  return c;
}

Checkpoint::~Checkpoint() {
  if (impl_ && impl_->fileId.valid() && std::uncaught_exceptions() > unwindingAtCreation_) {
    // See the header: abandon, do not close (a collective close may hang).
    (void)impl_.release();
    return;
  }
  impl_.reset();
  // A checkpoint that was not published (never committed, or its commit failed) is removed: the
  // previous generation under path_ stays the last good one.
  if (saving_ && !committed_ && comm_.isRoot()) std::remove((path_ + ".tmp").c_str());
}

void Checkpoint::commit() {
  FEDSILO_ASSERT(saving_ && !committed_);
  const std::string tmp = impl_->file;
  // Flush, then close, each checked. The flush writes what HDF5 still caches while every rank is in
  // the same call, so a full disk fails there (the run then aborts every rank) rather than inside the
  // close, where parallel HDF5 1.10 goes on to the MPI-IO close after a failed write on one rank and
  // never returns (docs/hpc.md).
  h5::check(H5Fflush(impl_->fileId, H5F_SCOPE_GLOBAL), "flush checkpoint " + tmp);
  impl_->dxpl.reset();
  impl_->lcpl.reset();
  impl_->fileId.close("checkpoint " + tmp);
  coordinated(comm_, [&] {
    if (!comm_.isRoot()) return;
    // The new generation replaces the old one only once every array reads back against its checksum.
    const std::string damaged = verifyCheckpointFile(tmp);
    if (!damaged.empty())
      throw StorageError(fmt("checkpoint: ", tmp, " does not read back as written (", damaged,
                             "); the previous checkpoint is kept (", path_, ")"));
    // rename(2) replaces the old checkpoint atomically: a crash leaves the old or the new one; the
    // data are fsynced first, so the new one is never published empty or torn.
    const std::string err = durableRename(tmp, path_);
    if (!err.empty()) throw StorageError(fmt("checkpoint: cannot publish ", tmp, " as ", path_, ": ", err, " (", tmp, ")"));
  });
  committed_ = true;
}

namespace {

// A whole array at `path`, identical on every rank: rank 0 writes it and its CRC-32C (attribute
// crc32c, computed on rank 0 so that every rank writes the same attribute), every rank reads all of it.
template <typename T>
void writeWhole(Checkpoint::Impl& impl, const Communicator& comm, const std::string& path, const std::vector<T>& v) {
  const hid_t f = impl.fileId;
  if (h5::pathExists(f, path)) throw RuntimeError(fmt("checkpoint: array '", path, "' saved twice"));
  hsize_t dims[1] = {v.size()};
  h5::Handle fs(H5Screate_simple(1, dims, nullptr), H5Sclose, "dataspace " + path);
  h5::Handle ds(H5Dcreate2(f, path.c_str(), H5Type<T>::file(), fs, impl.lcpl, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
                "create checkpoint " + path);
  std::int64_t crc = comm.isRoot() ? crc32cOf(v) : 0;
  comm.bcast(&crc, 1, 0);
  writeIntAttribute(ds, kCrcAttribute, crc);
  if (v.empty()) return;
  h5::Handle ms(H5Screate_simple(1, dims, nullptr), H5Sclose, "dataspace");
  if (!comm.isRoot()) {
    H5Sselect_none(fs);
    H5Sselect_none(ms);
  }
  h5::check(H5Dwrite(ds, H5Type<T>::mem(), ms, fs, impl.dxpl, v.data()), "write checkpoint " + path);
}

// Reads the whole array at `path` into v. Returns whether it matches its stored checksum.
template <typename T>
bool readWhole(Checkpoint::Impl& impl, const std::string& path, std::vector<T>& v) {
  h5::Handle ds(H5Dopen2(impl.fileId, path.c_str(), H5P_DEFAULT), H5Dclose, "open checkpoint " + path);
  h5::Handle fs(H5Dget_space(ds), H5Sclose, "dataspace");
  const hssize_t n = H5Sget_simple_extent_npoints(fs);
  v.assign(static_cast<std::size_t>(std::max<hssize_t>(n, 0)), T{});
  if (n > 0)
    h5::check(H5Dread(ds, H5Type<T>::mem(), H5S_ALL, H5S_ALL, impl.dxpl, v.data()), "read checkpoint " + path);
  return h5::integerAttribute(ds, kCrcAttribute) == static_cast<std::int64_t>(crc32cOf(v));
}

// Collective: every rank learns whether any rank found `array` damaged, and all throw together.
void agreeIntact(const Communicator& comm, bool intact, const std::string& file, const std::string& array) {
  coordinated(comm, [&] {
    if (!intact)
      throw RuntimeError(fmt("checkpoint ", file, ": array '", array,
                             "' does not match its checksum (the file is damaged; it was left as it is: remove it to "
                             "start over)"));
  });
}

// Where the per-client vectors of one name sit in /clients/<name>/values.
struct ClientLayout {
  std::vector<std::int64_t> length;   // per client; -1: the client has no vector
  std::vector<std::uint64_t> offset;  // start of each vector in the 1-D concatenation
  std::uint64_t total = 0;            // values stored, over all clients
  std::int64_t width = -1;            // the common length, when uniform
  bool uniform = true;                // [K, width] rows; otherwise the 1-D concatenation in client order

  explicit ClientLayout(std::vector<std::int64_t> lengths)
      : length(std::move(lengths)), offset(length.size(), 0) {
    for (std::size_t k = 0; k < length.size(); ++k) {
      if (length[k] < 0) continue;
      offset[k] = total;
      total += static_cast<std::uint64_t>(length[k]);
      if (width < 0) width = length[k];
      else if (length[k] != width) uniform = false;
    }
  }
  int dimensions() const { return uniform ? 2 : 1; }
  hsize_t rowWidth() const { return uniform ? static_cast<hsize_t>(width) : 1; }
  // The shape of the values dataset for K clients.
  std::vector<hsize_t> dims() const {
    return {uniform ? static_cast<hsize_t>(length.size()) : static_cast<hsize_t>(total), rowWidth()};
  }
};

// The clients of this rank that have a vector, in ascending order: the order of both the file
// selection and the packed memory buffer.
struct LocalClients {
  std::vector<int> ids;
  Ranges rows;              // their rows (uniform) or value ranges (concatenated) in the values dataset
  std::uint64_t count = 0;  // values they hold together

  LocalClients(const ClientLayout& layout, const Placement& placement, int rank) {
    for (int k : placement.clients(rank)) {
      const auto ku = static_cast<std::size_t>(k);
      if (layout.length[ku] < 0) continue;
      ids.push_back(k);
      rows.add(layout.uniform ? static_cast<hsize_t>(k) : layout.offset[ku],
               layout.uniform ? 1 : static_cast<hsize_t>(layout.length[ku]));
      count += static_cast<std::uint64_t>(layout.length[ku]);
    }
  }
  // The packed buffer in memory: `count` values, or nothing selected.
  h5::Handle memorySpace() const {
    hsize_t dims[1] = {std::max<hsize_t>(count, 1)};
    h5::Handle ms(H5Screate_simple(1, dims, nullptr), H5Sclose, "dataspace");
    if (count == 0) H5Sselect_none(ms);
    return ms;
  }
};

template <typename T>
void writeClientValues(Checkpoint::Impl& impl, const std::string& path, const ClientLayout& layout,
                       const LocalClients& local, const std::unordered_map<int, std::vector<T>>& m) {
  const std::vector<hsize_t> dims = layout.dims();
  h5::Handle fs(H5Screate_simple(layout.dimensions(), dims.data(), nullptr), H5Sclose, "dataspace " + path);
  h5::Handle ds(H5Dcreate2(impl.fileId, path.c_str(), H5Type<T>::file(), fs, impl.lcpl, H5P_DEFAULT, H5P_DEFAULT),
                H5Dclose, "create checkpoint " + path);
  local.rows.selectRows(fs, layout.rowWidth());
  std::vector<T> packed;
  packed.reserve(local.count);
  for (int k : local.ids) {
    const std::vector<T>& v = m.at(k);
    packed.insert(packed.end(), v.begin(), v.end());
  }
  T dummy{};  // HDF5 wants a non-null buffer even for an empty selection
  h5::check(H5Dwrite(ds, H5Type<T>::mem(), local.memorySpace(), fs, impl.dxpl, packed.empty() ? &dummy : packed.data()),
            "write checkpoint " + path);
}

// Reads this rank's clients' vectors into m. Returns whether each matches its checksum in `crc`.
template <typename T>
bool readClientValues(Checkpoint::Impl& impl, const std::string& path, const ClientLayout& layout,
                      const std::vector<std::int64_t>& crc, const LocalClients& local,
                      std::unordered_map<int, std::vector<T>>& m, const std::string& inconsistentShape) {
  h5::Handle ds(H5Dopen2(impl.fileId, path.c_str(), H5P_DEFAULT), H5Dclose, "open checkpoint " + path);
  h5::Handle fs(H5Dget_space(ds), H5Sclose, "dataspace");
  hsize_t dims[2] = {0, 0};
  const int nd = H5Sget_simple_extent_dims(fs, dims, nullptr);
  const std::vector<hsize_t> want = layout.dims();
  const bool ok = nd == layout.dimensions() && dims[0] == want[0] && (!layout.uniform || dims[1] == want[1]);
  if (!ok) throw RuntimeError(inconsistentShape);
  local.rows.selectRows(fs, layout.rowWidth());
  std::vector<T> packed(local.count, T{});
  T dummy{};  // HDF5 wants a non-null buffer even for an empty selection
  h5::check(H5Dread(ds, H5Type<T>::mem(), local.memorySpace(), fs, impl.dxpl, packed.empty() ? &dummy : packed.data()),
            "read checkpoint " + path);
  std::size_t at = 0;
  bool intact = true;
  for (int k : local.ids) {
    const auto ku = static_cast<std::size_t>(k);
    const auto n = static_cast<std::size_t>(layout.length[ku]);
    m[k].assign(packed.begin() + static_cast<std::ptrdiff_t>(at), packed.begin() + static_cast<std::ptrdiff_t>(at + n));
    intact = intact && crc[ku] == static_cast<std::int64_t>(crc32cOf(m[k]));
    at += n;
  }
  return intact;
}

// The bytes of `count` elements of the 1-D dataset `ds` from element `start` (or of row `start` of a
// 2-D one, count being its width), in the dataset's own file type: little-endian, as the checksums
// were computed. False when the read fails.
bool readStoredBytes(hid_t ds, hsize_t start, hsize_t count, std::vector<unsigned char>& bytes) {
  h5::Handle type = h5::Handle::adopt(H5Dget_type(ds), H5Tclose);
  h5::Handle fs = h5::Handle::adopt(H5Dget_space(ds), H5Sclose);
  if (!type.valid() || !fs.valid()) return false;
  bytes.assign(static_cast<std::size_t>(count) * H5Tget_size(type), 0);
  if (count == 0) return true;
  const int nd = H5Sget_simple_extent_ndims(fs);
  hsize_t offset[2] = {start, 0}, extent[2] = {nd == 2 ? 1 : count, count};
  if (nd < 1 || nd > 2 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, offset, nullptr, extent, nullptr) < 0) return false;
  hsize_t flat[1] = {count};
  h5::Handle ms = h5::Handle::adopt(H5Screate_simple(1, flat, nullptr), H5Sclose);
  return ms.valid() && H5Dread(ds, type, ms, fs, H5P_DEFAULT, bytes.data()) >= 0;
}

// The whole of a dataset's bytes (see readStoredBytes).
bool readAllStoredBytes(hid_t ds, std::vector<unsigned char>& bytes) {
  h5::Handle fs = h5::Handle::adopt(H5Dget_space(ds), H5Sclose);
  const hssize_t n = fs.valid() ? H5Sget_simple_extent_npoints(fs) : -1;
  return n >= 0 && (H5Sget_simple_extent_ndims(fs) == 1 || n == 0) &&
         readStoredBytes(ds, 0, static_cast<hsize_t>(n), bytes);
}

std::vector<std::int64_t> asInt64(const std::vector<unsigned char>& bytes) {
  std::vector<std::int64_t> v(bytes.size() / sizeof(std::int64_t));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(std::int64_t));
  return v;
}

// /clients/<name>/values against /clients/<name>/crc32c, client by client (one client's vector in
// memory at a time). "" or what is wrong.
std::string verifyClientValues(hid_t f, const std::string& values) {
  const std::string base = values.substr(0, values.size() - std::strlen("/values"));
  std::vector<unsigned char> bytes;
  std::vector<std::int64_t> length, crc;
  for (auto [name, into] : {std::pair{"/length", &length}, std::pair{"/crc32c", &crc}}) {
    h5::Handle ds = h5::Handle::adopt(H5Dopen2(f, (base + name).c_str(), H5P_DEFAULT), H5Dclose);
    if (!ds.valid() || !readAllStoredBytes(ds, bytes)) return fmt("cannot read ", base, name);
    *into = asInt64(bytes);
  }
  if (length.size() != crc.size()) return fmt(base, ": length and crc32c differ in size");
  const ClientLayout layout(length);
  h5::Handle ds = h5::Handle::adopt(H5Dopen2(f, values.c_str(), H5P_DEFAULT), H5Dclose);
  if (!ds.valid()) return fmt("cannot open ", values);
  for (std::size_t k = 0; k < length.size(); ++k) {
    if (length[k] < 0) continue;
    const hsize_t start = layout.uniform ? k : layout.offset[k];
    if (!readStoredBytes(ds, start, static_cast<hsize_t>(length[k]), bytes)) return fmt("cannot read ", values);
    if (crc32c(bytes.data(), bytes.size()) != static_cast<std::uint32_t>(crc[k]))
      return fmt(values, " of client ", k, " does not match its checksum");
  }
  return "";
}

// Every dataset but the per-client values: its bytes against its crc32c attribute.
std::string verifyWholeArray(hid_t ds, const std::string& name) {
  std::vector<unsigned char> bytes;
  if (!readAllStoredBytes(ds, bytes)) return fmt("cannot read ", name);
  const std::optional<std::int64_t> crc = h5::integerAttribute(ds, kCrcAttribute);
  if (!crc || *crc != static_cast<std::int64_t>(crc32c(bytes.data(), bytes.size())))
    return fmt(name, " does not match its checksum");
  return "";
}

std::string verifyCheckpointFile(const std::string& file) {
  const h5::QuietErrors quiet;
  h5::Handle f = h5::Handle::adopt(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) return "it does not open as HDF5";
  try {
    (void)readInfoAttributes(f, file);
  } catch (const Error& e) {
    return e.what();
  }
  std::vector<std::string> links;
  const H5L_iterate_t collect = [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
    static_cast<std::vector<std::string>*>(out)->push_back(name);
    return 0;
  };
  if (H5Lvisit(f, H5_INDEX_NAME, H5_ITER_INC, collect, &links) < 0) return "its groups cannot be listed";
  for (const std::string& link : links) {
    const std::string name = "/" + link;
    h5::Handle obj = h5::Handle::adopt(H5Oopen(f, name.c_str(), H5P_DEFAULT), H5Oclose);
    if (!obj.valid()) return fmt("cannot open ", name);
    if (H5Iget_type(obj) != H5I_DATASET) continue;
    const bool clientValues = name.rfind("/clients/", 0) == 0 && name.size() > 7 &&
                              name.compare(name.size() - 7, 7, "/values") == 0;
    const std::string problem = clientValues ? verifyClientValues(f, name) : verifyWholeArray(obj, name);
    if (!problem.empty()) return problem;
  }
  return "";  // a read-only close writes nothing: its result says nothing about the file
}

}  // namespace

template <typename T>
void Checkpoint::replicated(const std::string& name, std::vector<T>& v) {
  const std::string path = "/replicated/" + name;
  if (saving_) {
    const std::uint64_t n = v.size();
    if (comm_.allreduceMax<std::uint64_t>(n) != comm_.allreduceMin<std::uint64_t>(n))
      throw RuntimeError(fmt("checkpoint: replicated array '", name, "' differs in length across ranks"));
    writeWhole(*impl_, comm_, path, v);
  } else {
    if (!h5::pathExists(impl_->fileId, path))
      throw RuntimeError(
          fmt("checkpoint ", path_, " has no array '", name, "' (written by another version or algorithm?)"));
    agreeIntact(comm_, readWhole(*impl_, path, v), path_, path);
  }
}

template <typename T>
Checkpoint::ClientIndex Checkpoint::shareClientIndex(const std::string& name,
                                                     const std::unordered_map<int, std::vector<T>>& m) {
  // Every rank must create the datasets with identical arguments, so every rank first learns the
  // length and checksum of every client's vector.
  const int r = comm_.rank();
  const std::size_t K = static_cast<std::size_t>(placement_.numClients());
  std::vector<std::int64_t> mine;
  for (const auto& [k, v] : m) {
    FEDSILO_ASSERT(k >= 0 && static_cast<std::size_t>(k) < K && placement_.owner(k) == r, "checkpoint array ", name,
                   ": client ", k, " is not hosted by rank ", r);
    mine.insert(mine.end(), {k, static_cast<std::int64_t>(v.size()), static_cast<std::int64_t>(crc32cOf(v))});
  }
  ClientIndex index{std::vector<std::int64_t>(K, -1), std::vector<std::int64_t>(K, -1)};
  const std::vector<std::int64_t> all = comm_.allgatherv(mine);
  for (std::size_t i = 0; i + 2 < all.size(); i += 3) {
    index.length[static_cast<std::size_t>(all[i])] = all[i + 1];
    index.crc[static_cast<std::size_t>(all[i])] = all[i + 2];
  }
  writeWhole(*impl_, comm_, "/clients/" + name + "/length", index.length);
  writeWhole(*impl_, comm_, "/clients/" + name + "/" + kCrcAttribute, index.crc);
  return index;
}

Checkpoint::ClientIndex Checkpoint::readClientIndex(const std::string& name) {
  const std::string lengthPath = "/clients/" + name + "/length", crcPath = "/clients/" + name + "/" + kCrcAttribute;
  const std::size_t K = static_cast<std::size_t>(placement_.numClients());
  if (!h5::pathExists(impl_->fileId, lengthPath))
    throw RuntimeError(fmt("checkpoint ", path_, " has no per-client array '", name,
                           "' (written by another version or algorithm?)"));
  ClientIndex index;
  agreeIntact(comm_, readWhole(*impl_, lengthPath, index.length), path_, lengthPath);
  agreeIntact(comm_, h5::pathExists(impl_->fileId, crcPath) && readWhole(*impl_, crcPath, index.crc), path_, crcPath);
  if (index.length.size() != K || index.crc.size() != K)
    throw RuntimeError(
        fmt("checkpoint ", path_, ": per-client array '", name, "' has ", index.length.size(), " clients, expected ", K));
  return index;
}

template <typename T>
void Checkpoint::perClient(const std::string& name, std::unordered_map<int, std::vector<T>>& m) {
  const ClientIndex index = saving_ ? shareClientIndex(name, m) : readClientIndex(name);
  const ClientLayout layout(index.length);
  const LocalClients local(layout, placement_, comm_.rank());
  if (saving_) {
    for (int k : local.ids) FEDSILO_ASSERT(m.count(k) == 1);
  } else {
    m.clear();
  }
  if (layout.total == 0) {  // nothing but empty vectors (or none at all): no values dataset
    if (!saving_)
      for (int k : local.ids) m[k] = {};
    return;
  }
  const std::string valuesPath = "/clients/" + name + "/values";
  if (saving_) {
    writeClientValues(*impl_, valuesPath, layout, local, m);
    return;
  }
  const bool intact = readClientValues(*impl_, valuesPath, layout, index.crc, local, m,
                                       fmt("checkpoint ", path_, ": per-client array '", name, "' has an inconsistent shape"));
  agreeIntact(comm_, intact, path_, valuesPath);
}

void Checkpoint::floats(const std::string& name, std::vector<float>& v) { replicated(name, v); }
void Checkpoint::doubles(const std::string& name, std::vector<double>& v) { replicated(name, v); }
void Checkpoint::clientFloats(const std::string& name, std::unordered_map<int, std::vector<float>>& m) {
  perClient(name, m);
}
void Checkpoint::clientDoubles(const std::string& name, std::unordered_map<int, std::vector<double>>& m) {
  perClient(name, m);
}

}  // namespace fedsilo
