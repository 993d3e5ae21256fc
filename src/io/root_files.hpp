// Files as rank 0 sees them, answered on every rank: whether a file exists, its size and checksum, and
// whether the partial results file a checkpoint kept may be re-opened by a resume. Only rank 0 reads
// the file system, so that every rank acts on one answer even where the ranks see different views
// of it (a node-local folder, a stale network cache).
#pragma once
#include <cstdint>
#include <string>

#include "comm/communicator.hpp"

namespace fedsilo {

// Whether `path` exists (rank 0 looks, every rank gets the answer). Collective.
bool existsOnRoot(const std::string& path, const Communicator& comm);
// Size of `path` in bytes as rank 0 sees it (-1 if missing), on every rank. Collective.
std::int64_t fileSizeOnRoot(const std::string& path, const Communicator& comm);
// CRC-32C of the bytes of `path` as rank 0 reads them (-1 if unreadable), on every rank. Collective.
std::int64_t fileChecksumOnRoot(const std::string& path, const Communicator& comm);
// What a resume finds of the partial results file that a checkpoint recorded as closed cleanly.
struct PartialResultsCheck {
  enum class State { Intact, Missing, Damaged };
  State state = State::Intact;
  std::string problem;  // why it is not intact, "" when it is
};
// Checks the results file `partial` against what the checkpoint recorded when it was closed: exactly
// `size` bytes with the CRC-32C `checksum`, opening as HDF5 with at least `rows` rows in /rounds. A
// missing file is Missing; any difference is Damaged. Rank 0 checks (reading the whole file, then a
// serial read-only open); every rank gets the answer. Collective.
PartialResultsCheck checkPartialResults(const std::string& partial, std::int64_t size, std::int64_t checksum,
                                        std::int64_t rows, const Communicator& comm);

}  // namespace fedsilo
