#include "io/storage_errors.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/error.hpp"
#include "core/h5_handle.hpp"

namespace fedsilo {

namespace {

// HDF5 grows a file by metadata blocks and chunks of up to about this size: a folder that cannot take
// this much more is why such a write failed.
constexpr std::size_t kProbeBytes = std::size_t{1} << 20;

std::string folderOf(const std::string& path) {
  const std::string folder = std::filesystem::path(path).parent_path().string();
  return folder.empty() ? "." : folder;
}

}  // namespace

std::string writeProbe(const std::string& folder, std::size_t bytes) {
  std::string name = folder + "/.fedsilo-write-test-XXXXXX";
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return fmt("cannot create a file in ", folder, ": ", std::strerror(errno));
  const std::vector<char> block(std::min<std::size_t>(bytes, 65536), '\0');
  int err = 0;
  for (std::size_t done = 0; done < bytes && err == 0;) {
    const ssize_t n = ::write(fd, block.data(), std::min(block.size(), bytes - done));
    if (n < 0 && errno != EINTR) err = errno;
    if (n > 0) done += static_cast<std::size_t>(n);
  }
  if (err == 0 && ::fsync(fd) != 0 && errno != EINVAL) err = errno;  // NFS reports ENOSPC at the latest here
  ::close(fd);
  ::unlink(name.c_str());
  return err == 0 ? "" : fmt("cannot write ", bytes, " bytes in ", folder, ": ", std::strerror(err));
}

std::string storageProblem(const std::string& path) {
  const std::string folder = folderOf(path);
  struct statvfs st {};
  if (::statvfs(folder.c_str(), &st) == 0 && (st.f_flag & ST_RDONLY))
    return fmt(folder, " is on a read-only file system (", std::strerror(EROFS), ")");
  return writeProbe(folder, kProbeBytes);
}

int storageErrno(const std::string& text) {
  for (int err : {ENOSPC, EDQUOT, EROFS, EIO, EFBIG, EACCES})
    if (text.find(std::strerror(err)) != std::string::npos) return err;
  return 0;
}

std::string storageFailureMessage(const std::string& message, const std::string& file) {
  int err = storageErrno(message);
  if (err == 0) err = storageErrno(storageProblem(file));
  if (err == 0) return "";
  const std::string reason = std::strerror(err);
  const bool endsWithReason =
      message.size() >= reason.size() && message.compare(message.size() - reason.size(), reason.size(), reason) == 0;
  return fmt(message, endsWithReason ? "" : ": " + reason, " (", file, ")");
}

std::string failureReason(const std::string& file) {
  std::string why = h5::errorDetail();
  if (why.empty()) why = storageProblem(file);
  return why.empty() ? "" : ": " + why;
}

}  // namespace fedsilo
