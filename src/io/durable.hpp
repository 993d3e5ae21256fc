// Publishing a finished file durably: fsync(2) it before the atomic rename(2), then fsync the
// directory, so that after a crash the new name never points at data that were still only in the
// page cache (an empty or torn checkpoint or results file).
#pragma once
#include <string>

namespace fedsilo {

// fsync(from); rename(from, to); fsync(directory of to). Rank-local (the caller runs it on one rank,
// after the collective close). Returns "" on success, else what failed (with strerror), for the
// caller's message.
std::string durableRename(const std::string& from, const std::string& to);

}  // namespace fedsilo
