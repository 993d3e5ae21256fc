#include "io/durable.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace fedsilo {

namespace {

// fsync of `path` opened read-only ("" on success).
std::string syncPath(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return "open " + path + ": " + std::strerror(errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  return rc == 0 ? std::string() : "fsync " + path + ": " + std::strerror(err);
}

}  // namespace

std::string durableRename(const std::string& from, const std::string& to) {
  std::string err = syncPath(from, O_RDONLY);
  if (!err.empty()) return err;
  if (std::rename(from.c_str(), to.c_str()) != 0) return "rename: " + std::string(std::strerror(errno));
  // The rename itself is durable once the directory is synced. Some file systems refuse fsync on a
  // directory (EINVAL): the data are synced already, so that is not an error.
  std::string dir = std::filesystem::path(to).parent_path().string();
  if (dir.empty()) dir = ".";
  err = syncPath(dir, O_RDONLY | O_DIRECTORY);
  return err.find("Invalid argument") != std::string::npos ? std::string() : err;
}

}  // namespace fedsilo
