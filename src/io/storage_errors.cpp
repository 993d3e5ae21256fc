#include "io/storage_errors.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"
#include "core/h5_handle.hpp"

namespace fedsilo {

namespace {

// Less free space than this is "full": HDF5 extends files by chunks and metadata blocks of this order.
constexpr unsigned long long kFullBelowBytes = 64 * 1024;

}  // namespace

std::string storageProblem(const std::string& path) {
  std::string folder = std::filesystem::path(path).parent_path().string();
  if (folder.empty()) folder = ".";
  struct statvfs st {};
  if (::statvfs(folder.c_str(), &st) != 0) return "";
  if (st.f_flag & ST_RDONLY) return fmt(folder, " is on a read-only file system (", std::strerror(EROFS), ")");
  const unsigned long long freeBytes = static_cast<unsigned long long>(st.f_bavail) * st.f_frsize;
  if (st.f_blocks > 0 && freeBytes < kFullBelowBytes)  // (pseudo file systems such as /proc have no blocks)
    return fmt("the file system of ", folder, " is full (", std::strerror(ENOSPC), ": ", freeBytes, " bytes free)");
  if (st.f_files > 0 && st.f_favail == 0)
    return fmt("the file system of ", folder, " has no free inodes (", std::strerror(ENOSPC), ")");
  if (::access(folder.c_str(), W_OK) != 0) return fmt(folder, " is not writable (", std::strerror(errno), ")");
  return "";
}

std::string withStorageProblem(const std::string& message, const std::string& path) {
  for (int err : {EROFS, ENOSPC, EACCES, EDQUOT})
    if (message.find(std::strerror(err)) != std::string::npos) return message;
  const std::string problem = storageProblem(path);
  return problem.empty() ? message : fmt(message, " (", problem, ")");
}

std::string failureReason(const std::string& file) {
  std::string why = h5::errorDetail();
  if (why.empty()) why = storageProblem(file);
  return why.empty() ? "" : ": " + why;
}

}  // namespace fedsilo
