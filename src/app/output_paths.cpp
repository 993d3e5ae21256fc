#include "app/output_paths.hpp"

#include <filesystem>
#include <system_error>

#include "core/error.hpp"

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

void createParentFolder(const std::string& outputPath) {
  const fs::path folder = fs::path(outputPath).parent_path();
  if (folder.empty()) return;  // the current directory
  std::error_code ec;
  if (fs::is_directory(folder, ec)) return;
  const fs::path ancestor = existingAncestor(folder);
  if (!ancestor.empty() && !fs::is_directory(ancestor, ec))
    throw ConfigError(fmt("output = ", outputPath, ": ", ancestor.string(),
                          " exists and is not a folder, expected a path whose parents are folders"));
  if (!fs::create_directories(folder, ec) && ec)
    throw RuntimeError(fmt("output = ", outputPath, ": cannot create the folder ", folder.string(), ": ",
                           ec.message()));
}

}  // namespace

void prepareOutputFolder(const std::string& outputPath, const Communicator& comm) {
  coordinated(comm, [&] {
    if (comm.isRoot()) createParentFolder(outputPath);
  });
}

}  // namespace fedsilo
