// Start-up checks and preparation of the run's output locations, done once on rank 0 before any data
// is read, so that a path problem fails in the first second instead of after the last round.
#pragma once
#include <string>

#include "comm/communicator.hpp"

namespace fedsilo {

// Creates the missing parent folders of `outputPath` on rank 0 (collective: every rank learns a
// failure). A parent that exists but is not a folder is a ConfigError (exit 2: the path as given
// cannot work); a folder that cannot be created (permissions, read-only or full file system) is a
// RuntimeError naming it with the system's reason (exit 1).
void prepareOutputFolder(const std::string& outputPath, const Communicator& comm);

}  // namespace fedsilo
