// Large allocations that fail with one line naming what was being allocated and how big.
//
// Without this, a request the machine cannot satisfy ends as a bare "std::bad_alloc", or worse: Linux
// overcommits, so a vector of 20 GB on a 24 GB machine is granted and the kernel's OOM killer takes
// the rank (SIGKILL, no message) while the zeros are being written. So a large request is first
// compared with what the process can still obtain, and a std::bad_alloc that happens anyway is turned
// into the same one-line error. Out of memory is a run-time resource failure: exit code 1.
#pragma once
#include <cstdint>
#include <new>
#include <string>

#include "core/error.hpp"

namespace fedsilo {

// Out of memory for a named allocation (exit code 1).
class OutOfMemoryError : public RuntimeError {
 public:
  explicit OutOfMemoryError(const std::string& what) : RuntimeError(what) {}
};

// Bytes this process can still obtain: MemAvailable + SwapFree of /proc/meminfo, capped by the
// memory limit of its cgroup (v2 memory.max or v1 memory.limit_in_bytes, minus current usage) when
// one is set. UINT64_MAX when /proc/meminfo cannot be read (then nothing is refused in advance).
std::uint64_t availableMemoryBytes();

// "12.5 MB" (MB = 2^20 bytes, one decimal).
std::string megabytes(std::uint64_t bytes);

// Requests below this size are not checked in advance (reading /proc/meminfo for every small vector
// would cost more than it could save); a std::bad_alloc from them is still reported by allocateOrFail.
constexpr std::uint64_t kMemoryCheckThreshold = std::uint64_t(16) << 20;

// Throws OutOfMemoryError "out of memory: <what> needs X MB, but only Y MB are available" when
// `bytes` (at least kMemoryCheckThreshold) exceeds availableMemoryBytes().
void requireMemory(const std::string& what, std::uint64_t bytes);

// Checks `bytes` with requireMemory, then runs alloc(); a std::bad_alloc thrown by alloc() becomes
// OutOfMemoryError "out of memory: allocating <what> (X MB) failed". `bytes` is the size of what
// alloc() allocates (the total, when it fills several buffers).
template <typename F>
void allocateOrFail(const std::string& what, std::uint64_t bytes, F&& alloc) {
  requireMemory(what, bytes);
  try {
    alloc();
  } catch (const std::bad_alloc&) {
    throw OutOfMemoryError(fmt("out of memory: allocating ", what, " (", megabytes(bytes), ") failed"));
  }
}

// Bytes of n elements of type T, saturating at UINT64_MAX instead of wrapping.
template <typename T>
std::uint64_t bytesOf(std::uint64_t n) {
  return n > UINT64_MAX / sizeof(T) ? UINT64_MAX : n * sizeof(T);
}

namespace detail {
// Tests only: makes availableMemoryBytes() return `bytes` (0 restores the real value).
void setAvailableMemoryForTesting(std::uint64_t bytes);
}  // namespace detail

}  // namespace fedsilo
