// Start-up checks and preparation of the run's output locations, done on rank 0 before any data is
// read and before any file of the output is created or removed, so that a path problem fails in the
// first second instead of after the last round, and so that a second run with the same --output never
// touches the first one's files. The real run and --dry-run make the same checks (docs/hpc.md).
#pragma once
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "io/output_lock.hpp"

namespace fedsilo {

// Every file a run writes for results file `output`.
struct OutputFiles {
  explicit OutputFiles(const std::string& output);
  std::string results, partial, checkpoint, checkpointTmp, lock;
  // The files opened through MPI-IO (parallel HDF5).
  std::vector<std::string> mpiIo() const { return {partial, checkpoint, checkpointTmp}; }
};

// The longest file name (last path component) that Open MPI 4.1's MPI-IO can open, and the longest
// path as given to it. Its shared-file-pointer components build names of their own from the file's
// (docs/hpc.md, "File names"): "<session dir>/<name>_cid-<c>-<pid>.sm" must fit NAME_MAX, and
// "<path>.locktest.<rank>" a 256-byte buffer, whose overflow aborts the process. The limits assume
// up to 4-digit communicator ids, 7-digit pids and 6-digit ranks, so they do not change with the rank
// count (a run may resume at another one).
constexpr std::size_t kMpiIoMaxName = 255 - (sizeof("_cid-9999-4194304.sm") - 1);
constexpr std::size_t kMpiIoMaxPath = 255 - (sizeof(".locktest.999999") - 1);

// Refuses with a ConfigError (exit 2) a name of the output's files that the file system (NAME_MAX
// per component and PATH_MAX, from pathconf) or, when `mpiIo`, Open MPI's MPI-IO cannot take, naming
// the file, its length and the limit; and an output file that exists as a folder. Rank-local.
void checkOutputNames(const std::string& outputPath, bool mpiIo);

// What prepareOutputFolder does with missing parent folders of the output.
enum class FolderMode { Create, CheckOnly };

// Checks the names (checkOutputNames), then, on rank 0, the parent folders of `outputPath`: Create
// makes the missing ones (the real run); CheckOnly only checks that they could be made (--dry-run).
// Then creates and removes a temporary file in the output's folder (CheckOnly: its deepest existing
// ancestor), so that a read-only, full or forbidden folder fails now. A parent that exists but is not
// a folder is a ConfigError (exit 2: the path as given cannot work); a folder that cannot be created
// or written is a RuntimeError with the system's reason (exit 1). Collective: every rank learns a
// failure.
void prepareOutputFolder(const std::string& outputPath, const Communicator& comm, FolderMode mode = FolderMode::Create);

// Takes the output's lock (io/output_lock.hpp) on rank 0; the other ranks get an empty lock.
// Collective: when another run holds it, every rank throws (ConfigError, exit 2, naming its pid and
// host). A file system without locks gives no lock, and the lock's warning() says so (rank 0).
// CheckOnly (--dry-run) takes none when the output's folder does not exist yet.
OutputLock lockOutput(const std::string& outputPath, const Communicator& comm, FolderMode mode = FolderMode::Create);

}  // namespace fedsilo
