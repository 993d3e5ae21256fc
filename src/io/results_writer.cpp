#include "io/results_writer.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/types.hpp"
#include "comm/h5_mpio.hpp"
#include "io/durable.hpp"
#include "io/storage_errors.hpp"

namespace fedsilo {

namespace {

hid_t fixedString(std::size_t len) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, std::max<std::size_t>(len, 1));
  H5Tset_strpad(t, H5T_STR_NULLPAD);
  return t;
}

// One 1-D dataset of variable-length UTF-8 strings at `path` in the serially opened file `f`
// (replacing one that exists). Returns "" or what failed.
std::string writeVariableStrings(hid_t f, const std::string& path, const std::vector<std::string>& values) {
  h5::Handle type = h5::Handle::adopt(H5Tcopy(H5T_C_S1), H5Tclose);
  if (!type.valid() || H5Tset_size(type, H5T_VARIABLE) < 0 || H5Tset_cset(type, H5T_CSET_UTF8) < 0)
    return "variable-length string type";
  hsize_t dims[1] = {values.size()};
  h5::Handle space = h5::Handle::adopt(H5Screate_simple(1, dims, nullptr), H5Sclose);
  h5::Handle lcpl = h5::Handle::adopt(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  if (!space.valid() || !lcpl.valid() || H5Pset_create_intermediate_group(lcpl, 1) < 0) return "dataspace " + path;
  if (H5Lexists(f, path.c_str(), H5P_DEFAULT) > 0 && H5Ldelete(f, path.c_str(), H5P_DEFAULT) < 0) return "replace " + path;
  h5::Handle ds = h5::Handle::adopt(H5Dcreate2(f, path.c_str(), type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
  if (!ds.valid()) return "create " + path;
  if (values.empty()) return "";
  std::vector<const char*> text;
  text.reserve(values.size());
  for (const std::string& v : values) text.push_back(v.c_str());
  if (H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()) < 0) return "write " + path;
  return "";
}

}  // namespace

ResultsWriter::ResultsWriter(const std::string& path, const Communicator& comm, const Placement& placement, bool reopen)
    : comm_(comm),
      placement_(placement),
      myRows_(Ranges::ofClients(placement, comm.rank())),
      path_(path),
      partial_(path + ".partial") {
  h5::Handle fapl = h5::parallelFileAccess(comm);
  // The directory must exist: say so clearly rather than failing inside MPI-IO.
  const std::filesystem::path parent = std::filesystem::path(partial_).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent))
    throw RuntimeError(fmt("output = ", path, ": directory ", parent.string(), " does not exist"));
  hid_t f = reopen ? H5Fopen(partial_.c_str(), H5F_ACC_RDWR, fapl)
                   : H5Fcreate(partial_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  if (f < 0)
    throw RuntimeError(fmt("output = ", path, ": cannot ", reopen ? "open " : "create ", partial_,
                           failureReason(partial_)));
  file_ = h5::Handle(f, H5Fclose, "open results file");
  dxpl_ = h5::collectiveTransfer(comm);
  lcpl_ = h5::Handle(H5Pcreate(H5P_LINK_CREATE), H5Pclose, "H5Pcreate(lcpl)");
  h5::check(H5Pset_create_intermediate_group(lcpl_, 1), "H5Pset_create_intermediate_group");
  if (reopen && H5Lexists(file_, "/rounds", H5P_DEFAULT) > 0 && H5Lexists(file_, "/rounds/round", H5P_DEFAULT) > 0) {
    h5::Handle d(H5Dopen2(file_, "/rounds/round", H5P_DEFAULT), H5Dclose, "open /rounds/round");
    h5::Handle s(H5Dget_space(d), H5Sclose, "dataspace");
    hsize_t dims[1];
    H5Sget_simple_extent_dims(s, dims, nullptr);
    rows_ = dims[0];
  }
}

ResultsWriter::~ResultsWriter() {
  if (committed_) return;
  rounds_.clear();  // unchecked closes: the run failed already, and the partial file goes
  dxpl_.reset();
  lcpl_.reset();
  file_.reset();
  if (comm_.isRoot()) std::remove(partial_.c_str());
}

// Closes the round datasets and the file, each checked, after a flush (see Checkpoint::commit in
// io/checkpoint.cpp for why the flush comes first). Throws on the rank where one of them failed.
void ResultsWriter::closeFile() {
  for (auto& [name, dataset] : rounds_) dataset.close("/rounds/" + name + " in " + partial_);
  rounds_.clear();
  h5::check(H5Fflush(file_, H5F_SCOPE_GLOBAL), "flush " + partial_);
  dxpl_.reset();
  lcpl_.reset();
  file_.close(partial_);
}

void ResultsWriter::commit() {
  closeFile();
  // Every rank's data are in the file after the collective close. Rank 0 adds the string datasets
  // (serially: parallel HDF5 1.10 cannot write variable-length data), then fsyncs and renames.
  std::string err;
  if (comm_.isRoot()) {
    err = writePendingStrings();
    if (err.empty()) err = durableRename(partial_, path_);
  }
  const int ok = comm_.allreduceMin(err.empty() ? 1 : 0);
  committed_ = err.empty() && ok;  // else the destructor removes what is left of the partial file
  if (ok) return;
  // Every rank took part in the allreduce above: agreed, and said once, by rank 0.
  if (!comm_.isRoot()) throw PeerFailure(ExitCode::Storage);
  StorageError failed(fmt("output = ", path_, ": cannot publish ", partial_, ": ", err, " (", partial_, ")"));
  failed.markAgreed();
  throw failed;
}

void ResultsWriter::closeKeepingPartial() {
  closeFile();
  committed_ = true;  // the destructor must not remove the partial file
}

void ResultsWriter::writeRootAttribute(const std::string& name, const std::string& value) {
  writeStringAttribute("/", name, value);
}

void ResultsWriter::writeRootAttribute(const std::string& name, std::int64_t value) {
  h5::Handle space(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate");
  if (H5Aexists(file_, name.c_str()) > 0) h5::check(H5Adelete(file_, name.c_str()), "replace attribute " + name);
  h5::Handle a(H5Acreate2(file_, name.c_str(), H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
               "create attribute " + name);
  h5::check(H5Awrite(a, H5T_NATIVE_INT64, &value), "write attribute " + name);
}

void ResultsWriter::writeStringAttribute(const std::string& path, const std::string& name, const std::string& value) {
  h5::Handle obj(H5Oopen(file_, path.c_str(), H5P_DEFAULT), H5Oclose, "open " + path);
  h5::Handle type(fixedString(value.size()), H5Tclose, "string type");
  h5::Handle space(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate");
  if (H5Aexists(obj, name.c_str()) > 0) h5::check(H5Adelete(obj, name.c_str()), "replace attribute " + name);
  h5::Handle a(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
               "create attribute " + name);
  h5::check(H5Awrite(a, type, value.empty() ? "" : value.data()), "write attribute " + name);
}

void ResultsWriter::writeNumberAttribute(const std::string& path, const std::string& name, double value) {
  h5::Handle obj(H5Oopen(file_, path.c_str(), H5P_DEFAULT), H5Oclose, "open " + path);
  h5::Handle space(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate");
  if (H5Aexists(obj, name.c_str()) > 0) h5::check(H5Adelete(obj, name.c_str()), "replace attribute " + name);
  h5::Handle a(H5Acreate2(obj, name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
               "create attribute " + name);
  h5::check(H5Awrite(a, H5T_NATIVE_DOUBLE, &value), "write attribute " + name);
}

hid_t ResultsWriter::roundDataset(const std::string& name, bool perClient, hid_t fileType) {
  auto it = rounds_.find(name);
  if (it != rounds_.end()) return it->second;
  const std::string path = "/rounds/" + name;
  const hsize_t K = static_cast<hsize_t>(placement_.numClients());
  hid_t d;
  if (H5Lexists(file_, "/rounds", H5P_DEFAULT) > 0 && H5Lexists(file_, path.c_str(), H5P_DEFAULT) > 0) {
    d = H5Dopen2(file_, path.c_str(), H5P_DEFAULT);
  } else {
    const int rank = perClient ? 2 : 1;
    hsize_t dims[2] = {rows_, K}, maxd[2] = {H5S_UNLIMITED, K};
    const hsize_t clientRowsPerChunk = std::max<hsize_t>(1, std::min<hsize_t>(64, 65536 / std::max<hsize_t>(K, 1)));
    hsize_t chunk[2] = {perClient ? clientRowsPerChunk : 256, K};
    h5::Handle space(H5Screate_simple(rank, dims, maxd), H5Sclose, "dataspace " + path);
    h5::Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "dcpl");
    h5::check(H5Pset_chunk(dcpl, rank, chunk), "H5Pset_chunk " + path);
    if (H5Tget_class(fileType) == H5T_FLOAT) {
      const double nan = kNaN;
      H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &nan);
    }
    d = H5Dcreate2(file_, path.c_str(), fileType, space, lcpl_, dcpl, H5P_DEFAULT);
  }
  if (d < 0) throw RuntimeError(fmt("HDF5: cannot create or open ", path, failureReason(partial_)));
  return rounds_.emplace(name, h5::Handle(d, H5Dclose, path)).first->second;
}

void ResultsWriter::appendRoundValue(const std::string& name, hid_t memType, hid_t fileType, const void* value) {
  hid_t d = roundDataset(name, false, fileType);
  hsize_t dims[1] = {rows_ + 1};
  h5::check(H5Dset_extent(d, dims), "extend /rounds/" + name);
  h5::Handle fs(H5Dget_space(d), H5Sclose, "space");
  hsize_t one[1] = {1}, start[1] = {rows_};
  h5::Handle ms(H5Screate_simple(1, one, nullptr), H5Sclose, "space");
  if (comm_.isRoot()) {
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, one, nullptr);
  } else {
    H5Sselect_none(fs);
    H5Sselect_none(ms);
  }
  h5::check(H5Dwrite(d, memType, ms, fs, dxpl_, value), "write /rounds/" + name);
}

void ResultsWriter::appendRoundScalar(const std::string& name, double value) {
  appendRoundValue(name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, &value);
}

void ResultsWriter::appendRoundInt(const std::string& name, std::int64_t value) {
  appendRoundValue(name, H5T_NATIVE_INT64, H5T_STD_I64LE, &value);
}

void ResultsWriter::appendRoundClients(const std::string& name, const std::vector<double>& local) {
  hid_t d = roundDataset(name, true, H5T_IEEE_F64LE);
  const hsize_t K = static_cast<hsize_t>(placement_.numClients());
  hsize_t dims[2] = {rows_ + 1, K};
  h5::check(H5Dset_extent(d, dims), "extend /rounds/" + name);
  h5::Handle fs(H5Dget_space(d), H5Sclose, "space");
  const hsize_t n = static_cast<hsize_t>(placement_.count(comm_.rank()));
  FEDSILO_ASSERT(local.size() == n, "round row for ", name, " has ", local.size(), " values, expected ", n);
  hsize_t mdim[1] = {std::max<hsize_t>(n, 1)};
  h5::Handle ms(H5Screate_simple(1, mdim, nullptr), H5Sclose, "space");
  myRows_.selectColumns(fs, rows_);
  if (n == 0) H5Sselect_none(ms);
  h5::check(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl_, local.data()), "write /rounds/" + name);
}

void ResultsWriter::endRound() { ++rows_; }

void ResultsWriter::truncateRounds(std::uint64_t rows) {
  if (H5Lexists(file_, "/rounds", H5P_DEFAULT) <= 0) {
    rows_ = 0;
    return;
  }
  h5::Handle g(H5Gopen2(file_, "/rounds", H5P_DEFAULT), H5Gclose, "open /rounds");
  H5G_info_t info;
  h5::check(H5Gget_info(g, &info), "H5Gget_info");
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    char name[256];
    if (H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT) < 0)
      throw RuntimeError(h5::failure("list /rounds"));
    h5::Handle d(H5Dopen2(g, name, H5P_DEFAULT), H5Dclose, std::string("open /rounds/") + name);
    h5::Handle s(H5Dget_space(d), H5Sclose, "space");
    hsize_t dims[2] = {0, 0};
    const int nd = H5Sget_simple_extent_dims(s, dims, nullptr);
    dims[0] = rows;
    (void)nd;
    h5::check(H5Dset_extent(d, dims), std::string("truncate /rounds/") + name);
  }
  rows_ = rows;
}

void ResultsWriter::writeReplicated(const std::string& path, hid_t memType, hid_t fileType, const void* data,
                                    const std::vector<std::uint64_t>& dims) {
  std::vector<hsize_t> d(dims.begin(), dims.end());
  h5::Handle fs(d.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(static_cast<int>(d.size()), d.data(), nullptr),
                H5Sclose, "dataspace " + path);
  if (H5Lexists(file_, path.c_str(), H5P_DEFAULT) > 0) h5::check(H5Ldelete(file_, path.c_str(), H5P_DEFAULT), "replace " + path);
  h5::Handle ds(H5Dcreate2(file_, path.c_str(), fileType, fs, lcpl_, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
                "create " + path);
  hsize_t total = 1;
  for (auto x : d) total *= x;
  if (total == 0) return;
  h5::Handle ms(d.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(static_cast<int>(d.size()), d.data(), nullptr),
                H5Sclose, "dataspace");
  if (!comm_.isRoot()) {
    H5Sselect_none(fs);
    H5Sselect_none(ms);
  }
  h5::check(H5Dwrite(ds, memType, ms, fs, dxpl_, data), "write " + path);
}

void ResultsWriter::writeScalar(const std::string& path, double value) {
  writeReplicated(path, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, &value, {});
}
void ResultsWriter::writeIntScalar(const std::string& path, std::int64_t value) {
  writeReplicated(path, H5T_NATIVE_INT64, H5T_STD_I64LE, &value, {});
}
void ResultsWriter::writeArray(const std::string& path, const std::vector<double>& v,
                               const std::vector<std::uint64_t>& dims) {
  writeReplicated(path, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, v.data(), dims);
}
void ResultsWriter::writeIntArray(const std::string& path, const std::vector<std::int64_t>& v,
                                  const std::vector<std::uint64_t>& dims) {
  writeReplicated(path, H5T_NATIVE_INT64, H5T_STD_I64LE, v.data(), dims);
}
void ResultsWriter::writeFloatArray(const std::string& path, const std::vector<float>& v,
                                    const std::vector<std::uint64_t>& dims) {
  writeReplicated(path, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, v.data(), dims);
}

void ResultsWriter::writeStrings(const std::string& path, const std::vector<std::string>& values) {
  // Replicated: rank 0's copy is written by commit().
  if (comm_.isRoot()) pendingStrings_[path] = values;
}

std::string ResultsWriter::writePendingStrings() {
  if (pendingStrings_.empty()) return "";
  const h5::QuietErrors quiet;
  const hid_t f = H5Fopen(partial_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return "re-open " + partial_ + failureReason(partial_);
  std::string failed;
  for (const auto& [path, values] : pendingStrings_) {
    failed = writeVariableStrings(f, path, values);
    if (!failed.empty()) break;
  }
  const herr_t closed = H5Fclose(f);  // writeVariableStrings throws nothing: f is always closed here
  if (!failed.empty()) return failed + " in " + partial_ + failureReason(partial_);
  if (closed < 0) return "close " + partial_ + failureReason(partial_);
  pendingStrings_.clear();
  return "";
}

void ResultsWriter::writeRows(const std::string& path, hid_t memType, hid_t fileType, const void* data,
                              std::uint64_t width, bool matrix) {
  const hsize_t K = static_cast<hsize_t>(placement_.numClients());
  hsize_t dims[2] = {K, width};
  const int rank = width == 1 && !matrix ? 1 : 2;
  h5::Handle fs(H5Screate_simple(rank, dims, nullptr), H5Sclose, "dataspace " + path);
  if (H5Lexists(file_, path.c_str(), H5P_DEFAULT) > 0) h5::check(H5Ldelete(file_, path.c_str(), H5P_DEFAULT), "replace " + path);
  h5::Handle ds(H5Dcreate2(file_, path.c_str(), fileType, fs, lcpl_, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
                "create " + path);
  const hsize_t n = static_cast<hsize_t>(placement_.count(comm_.rank()));
  hsize_t mdim[1] = {std::max<hsize_t>(n * width, 1)};
  h5::Handle ms(H5Screate_simple(1, mdim, nullptr), H5Sclose, "dataspace");
  if (n > 0 && width > 0) {
    myRows_.selectRows(fs, width);
  } else {
    H5Sselect_none(fs);
    H5Sselect_none(ms);
  }
  h5::check(H5Dwrite(ds, memType, ms, fs, dxpl_, data), "write " + path);
}

void ResultsWriter::writeClientRows(const std::string& path, const std::vector<double>& rows, std::uint64_t width) {
  FEDSILO_ASSERT(rows.size() == placement_.count(comm_.rank()) * width, path);
  writeRows(path, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, rows.data(), width);
}
void ResultsWriter::writeClientMatrix(const std::string& path, const std::vector<double>& rows, std::uint64_t width) {
  FEDSILO_ASSERT(rows.size() == placement_.count(comm_.rank()) * width, path);
  writeRows(path, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, rows.data(), width, true);
}
void ResultsWriter::writeClientIntRows(const std::string& path, const std::vector<std::int64_t>& rows,
                                       std::uint64_t width) {
  FEDSILO_ASSERT(rows.size() == placement_.count(comm_.rank()) * width, path);
  writeRows(path, H5T_NATIVE_INT64, H5T_STD_I64LE, rows.data(), width);
}
void ResultsWriter::writeClientFloatRows(const std::string& path, const std::vector<float>& rows, std::uint64_t width) {
  FEDSILO_ASSERT(rows.size() == placement_.count(comm_.rank()) * width, path);
  writeRows(path, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, rows.data(), width);
}

}  // namespace fedsilo
