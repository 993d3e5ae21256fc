#include "app/output_paths.hpp"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <filesystem>
#include <system_error>

#include "core/error.hpp"
#include "io/storage_errors.hpp"

namespace fedsilo {

namespace {

namespace fs = std::filesystem;

// The deepest ancestor of `folder` that exists, for the message when it is not a folder.
fs::path existingAncestor(const fs::path& folder) {
  fs::path p = folder;
  std::error_code ec;
  while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
  return p;
}

// The folder that holds (or will hold) `outputPath`'s files, "." for the current one.
fs::path outputFolder(const std::string& outputPath) {
  const fs::path folder = fs::path(outputPath).parent_path();
  return folder.empty() ? fs::path(".") : folder;
}

// pathconf(2) of the deepest existing ancestor of `folder`, or `fallback` when it gives no limit.
std::size_t pathLimit(const fs::path& folder, int name, long fallback) {
  fs::path p = existingAncestor(folder);
  if (p.empty()) p = ".";
  errno = 0;
  const long v = ::pathconf(p.c_str(), name);
  return static_cast<std::size_t>(v > 0 ? v : fallback);
}

void refuseLongName(const std::string& output, const std::string& file, std::size_t length, std::size_t limit,
                    const char* what) {
  throw ConfigError(fmt("output = ", output, ": ", what, " of ", file, " is ", length, " characters long, above the limit of ",
                        limit, "; choose a shorter --output"));
}

void checkFileSystemLimits(const std::string& output, const std::string& file) {
  const fs::path folder = outputFolder(output);
  const std::size_t nameMax = pathLimit(folder, _PC_NAME_MAX, NAME_MAX);
  const std::size_t pathMax = pathLimit(folder, _PC_PATH_MAX, PATH_MAX);
  for (const fs::path& part : fs::path(file)) {
    const std::size_t n = part.native().size();
    if (n > nameMax) refuseLongName(output, file, n, nameMax, "a path component (the file system's NAME_MAX)");
  }
  // PATH_MAX counts the terminating NUL.
  if (file.size() >= pathMax) refuseLongName(output, file, file.size(), pathMax - 1, "the path (PATH_MAX)");
}

void checkMpiIoLimits(const std::string& output, const std::string& file) {
  const std::size_t name = fs::path(file).filename().native().size();
  if (name > kMpiIoMaxName) refuseLongName(output, file, name, kMpiIoMaxName, "the file name (Open MPI's MPI-IO)");
  if (file.size() > kMpiIoMaxPath) refuseLongName(output, file, file.size(), kMpiIoMaxPath, "the path (Open MPI's MPI-IO)");
}

void refuseFolders(const OutputFiles& files) {
  const std::pair<const std::string*, const char*> named[] = {{&files.results, "the results file"},
                                                              {&files.partial, "the partial results file"},
                                                              {&files.checkpoint, "the checkpoint"},
                                                              {&files.checkpointTmp, "the checkpoint being written"},
                                                              {&files.lock, "the lock file"}};
  for (const auto& [path, role] : named) {
    std::error_code ec;
    if (fs::is_directory(*path, ec))
      throw ConfigError(fmt("output = ", files.results, ": ", *path, " (", role,
                            ") is a folder, expected a file name fedsilo can create; remove it or choose another --output"));
  }
}

// Creates the missing parent folders (Create), or checks that the path to them is made of folders.
// Returns the folder in which the write test runs.
fs::path prepareParents(const std::string& outputPath, FolderMode mode) {
  const fs::path folder = fs::path(outputPath).parent_path();
  if (folder.empty()) return ".";
  std::error_code ec;
  if (fs::is_directory(folder, ec)) return folder;
  const fs::path ancestor = existingAncestor(folder);
  if (!ancestor.empty() && !fs::is_directory(ancestor, ec))
    throw ConfigError(fmt("output = ", outputPath, ": ", ancestor.string(),
                          " exists and is not a folder, expected a path whose parents are folders"));
  if (mode == FolderMode::CheckOnly) return ancestor.empty() ? fs::path(".") : ancestor;
  if (!fs::create_directories(folder, ec) && ec)
    throw RuntimeError(fmt("output = ", outputPath, ": cannot create the folder ", folder.string(), ": ",
                           ec.message()));
  return folder;
}

// A read-only, full or forbidden folder fails here, with the system's reason.
void writeTest(const std::string& outputPath, const fs::path& folder) {
  const std::string failed = writeProbe(folder.string(), 4096);
  if (!failed.empty()) throw RuntimeError(fmt("output = ", outputPath, ": ", failed));
}

}  // namespace

OutputFiles::OutputFiles(const std::string& output)
    : results(output),
      partial(output + ".partial"),
      checkpoint(output + ".ckpt"),
      checkpointTmp(output + ".ckpt.tmp"),
      lock(output + ".lock") {}

void checkOutputNames(const std::string& outputPath, bool mpiIo) {
  const OutputFiles files(outputPath);
  for (const std::string* f : {&files.results, &files.partial, &files.checkpoint, &files.checkpointTmp, &files.lock})
    checkFileSystemLimits(outputPath, *f);
  if (mpiIo)
    for (const std::string& f : files.mpiIo()) checkMpiIoLimits(outputPath, f);
  refuseFolders(files);
}

void prepareOutputFolder(const std::string& outputPath, const Communicator& comm, FolderMode mode) {
  coordinated(comm, [&] {
    if (!comm.isRoot()) return;
    checkOutputNames(outputPath, !comm.isSingle());
    writeTest(outputPath, prepareParents(outputPath, mode));
  });
}

OutputLock lockOutput(const std::string& outputPath, const Communicator& comm, FolderMode mode) {
  OutputLock lock;
  coordinated(comm, [&] {
    if (!comm.isRoot()) return;
    std::error_code ec;
    // --dry-run into folders that do not exist yet: no run can hold a lock there.
    if (mode == FolderMode::CheckOnly && !fs::is_directory(outputFolder(outputPath), ec)) return;
    lock = OutputLock::acquire(OutputFiles(outputPath).lock, outputPath);
  });
  return lock;
}

}  // namespace fedsilo
