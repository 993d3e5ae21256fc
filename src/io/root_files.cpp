#include "io/root_files.hpp"

#include <filesystem>

#include "core/error.hpp"
#include "core/h5_handle.hpp"
#include "io/checksum.hpp"

namespace fedsilo {

bool existsOnRoot(const std::string& path, const Communicator& comm) {
  int e = 0;
  if (comm.isRoot()) {
    std::error_code ec;
    e = std::filesystem::exists(path, ec) ? 1 : 0;
  }
  comm.bcast(&e, 1, 0);
  return e != 0;
}

std::int64_t fileSizeOnRoot(const std::string& path, const Communicator& comm) {
  std::int64_t size = -1;
  if (comm.isRoot()) {
    std::error_code ec;
    const auto s = std::filesystem::file_size(path, ec);
    if (!ec) size = static_cast<std::int64_t>(s);
  }
  comm.bcast(&size, 1, 0);
  return size;
}

std::int64_t fileChecksumOnRoot(const std::string& path, const Communicator& comm) {
  std::int64_t crc = -1;
  if (comm.isRoot()) {
    std::uint32_t c = 0;
    std::string error;
    if (crc32cOfFile(path, c, error)) crc = c;
  }
  comm.bcast(&crc, 1, 0);
  return crc;
}

namespace {

// Whether the results file `f` has at least `rows` rows in /rounds.
bool hasRounds(hid_t f, std::int64_t rows) {
  if (rows <= 0) return true;
  if (H5Lexists(f, "/rounds", H5P_DEFAULT) <= 0 || H5Lexists(f, "/rounds/round", H5P_DEFAULT) <= 0) return false;
  h5::Handle d = h5::Handle::adopt(H5Dopen2(f, "/rounds/round", H5P_DEFAULT), H5Dclose);
  h5::Handle sp = h5::Handle::adopt(d.valid() ? H5Dget_space(d) : -1, H5Sclose);
  hsize_t dims[1] = {0};
  return sp.valid() && H5Sget_simple_extent_ndims(sp) == 1 && H5Sget_simple_extent_dims(sp, dims, nullptr) == 1 &&
         dims[0] >= static_cast<hsize_t>(rows);
}

std::string partialProblemOnRoot(const std::string& partial, std::int64_t size, std::int64_t checksum,
                                 std::int64_t rows) {
  std::error_code ec;
  const auto s = std::filesystem::file_size(partial, ec);
  if (ec) return "cannot be read: " + ec.message();
  if (static_cast<std::int64_t>(s) != size)
    return fmt("has ", s, " bytes, the checkpoint recorded ", size, " (it changed after the checkpoint)");
  std::uint32_t crc = 0;
  std::string error;
  if (!crc32cOfFile(partial, crc, error)) return "cannot be read: " + error;
  if (static_cast<std::int64_t>(crc) != checksum)
    return "does not match the checksum recorded in the checkpoint (changed or damaged after the checkpoint)";
  h5::Handle f = h5::Handle::adopt(H5Fopen(partial.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) return "does not open as HDF5";
  if (!hasRounds(f, rows)) return fmt("has fewer than the checkpoint's ", rows, " rows in /rounds");
  return "";
}

}  // namespace

PartialResultsCheck checkPartialResults(const std::string& partial, std::int64_t size, std::int64_t checksum,
                                        std::int64_t rows, const Communicator& comm) {
  const h5::QuietErrors quiet;  // a damaged file is an answer here, not an error to print
  PartialResultsCheck check;
  int state = 0;
  if (comm.isRoot()) {
    std::error_code ec;
    const bool missing = !std::filesystem::exists(partial, ec) && !ec;
    check.problem = missing ? "is missing" : partialProblemOnRoot(partial, size, checksum, rows);
    state = static_cast<int>(missing                 ? PartialResultsCheck::State::Missing
                             : check.problem.empty() ? PartialResultsCheck::State::Intact
                                                     : PartialResultsCheck::State::Damaged);
  }
  comm.bcast(check.problem, 0);
  comm.bcast(&state, 1, 0);
  check.state = static_cast<PartialResultsCheck::State>(state);
  return check;
}

}  // namespace fedsilo
