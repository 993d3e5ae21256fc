// Why a file system refuses writes, for error messages: parallel HDF5 reports a failed MPI-IO write
// without the system's reason (Open MPI's MPI-IO returns a generic error), so when a write of the
// results file or a checkpoint fails, fedsilo looks at the file system itself.
#pragma once
#include <string>

namespace fedsilo {

// The reason the folder that holds (or will hold) `path` cannot take writes, in the system's words
// with the folder named: "out is on a read-only file system (Read-only file system)", "... full (No
// space left on device: 0 bytes free)", "... has no free inodes ...", "... not writable (Permission
// denied)". "" when none of these holds.
std::string storageProblem(const std::string& path);

// For the message of an HDF5 call on `file` that just failed: ": <reason>" with the reason HDF5
// recorded (h5::errorDetail) or else storageProblem(file); "" when neither knows one.
std::string failureReason(const std::string& file);

// `message` with " (<storageProblem(path)>)" appended, unless there is no such problem or the message
// already names a storage error (read-only file system, no space, permission denied, quota).
std::string withStorageProblem(const std::string& message, const std::string& path);

}  // namespace fedsilo
