// Why a file system refuses writes, for error messages: parallel HDF5 reports a failed MPI-IO write
// without the system's reason (Open MPI's MPI-IO returns a generic error), so fedsilo asks the file
// system itself, by writing a temporary file beside the output.
#pragma once
#include <cstddef>
#include <string>

namespace fedsilo {

// Creates a temporary file in `folder`, writes `bytes` bytes to it and removes it. Returns "" when
// that worked, else what failed with the system's reason ("cannot create a file in out: Read-only
// file system", "cannot write 1048576 bytes in out: No space left on device").
std::string writeProbe(const std::string& folder, std::size_t bytes);

// The reason the folder that holds `path` cannot take writes now (a read-only file system; a failed
// write probe of 1 MiB: no space, no inodes, quota, permission), or "" when it can.
std::string storageProblem(const std::string& path);

// For the message of an HDF5 call on `file` that just failed: ": <reason>" with the reason HDF5
// recorded (h5::errorDetail) or else storageProblem(file); "" when neither knows one.
std::string failureReason(const std::string& file);

// The errno of the storage failure whose strerror text `text` contains (no space, quota, read-only
// file system, I/O error, file too large, permission denied), or 0.
int storageErrno(const std::string& text);

// For a run-time error `message` met while writing `file`: the message of a storage failure (exit 74,
// StorageError), "<message>: <reason> (<file>)", when the message names one of storageErrno's errors
// or the folder of `file` cannot take writes now (storageProblem); "" when neither is the case.
std::string storageFailureMessage(const std::string& message, const std::string& file);

}  // namespace fedsilo
