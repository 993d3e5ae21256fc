#include "core/memory.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace fedsilo {

namespace {

std::atomic<std::uint64_t> gTestingAvailable{0};

// /proc/meminfo's "MemAvailable:   11268008 kB" lines -> bytes by key.
bool meminfoField(const std::string& text, const std::string& key, std::uint64_t* bytes) {
  std::istringstream in(text);
  std::string name;
  unsigned long long kb = 0;
  std::string unit;
  while (in >> name >> kb) {
    std::getline(in, unit);
    if (name == key + ":") {
      *bytes = static_cast<std::uint64_t>(kb) * 1024;
      return true;
    }
  }
  return false;
}

// First unsigned integer in a file (cgroup limits and usage); false for "max" or a missing file.
bool readNumber(const std::string& path, std::uint64_t* value) {
  std::ifstream in(path);
  unsigned long long v = 0;
  if (!(in >> v)) return false;
  *value = static_cast<std::uint64_t>(v);
  return true;
}

// What the process's memory cgroup still allows, or UINT64_MAX without a limit. /proc/self/cgroup
// names the group: "0::/path" (v2, files memory.max and memory.current) or "N:memory:/path" (v1,
// memory.limit_in_bytes and memory.usage_in_bytes). Inside a container the group is often the root
// of its own mount, so the mount root is tried as well.
std::uint64_t cgroupHeadroom() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  std::uint64_t best = UINT64_MAX;
  auto consider = [&](const std::string& dir, const char* limitFile, const char* usageFile) {
    std::uint64_t limit = 0, usage = 0;
    if (!readNumber(dir + limitFile, &limit) || limit >= (std::uint64_t(1) << 60)) return;
    if (!readNumber(dir + usageFile, &usage)) usage = 0;
    best = std::min(best, limit > usage ? limit - usage : 0);
  };
  while (std::getline(in, line)) {
    const std::size_t c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1), path = line.substr(c2 + 1);
    if (controllers.empty()) {
      for (const std::string& dir : {"/sys/fs/cgroup" + path, std::string("/sys/fs/cgroup")})
        consider(dir + "/", "memory.max", "memory.current");
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      for (const std::string& dir : {"/sys/fs/cgroup/memory" + path, std::string("/sys/fs/cgroup/memory")})
        consider(dir + "/", "memory.limit_in_bytes", "memory.usage_in_bytes");
    }
  }
  return best;
}

}  // namespace

std::uint64_t availableMemoryBytes() {
  if (const std::uint64_t forced = gTestingAvailable.load()) return forced;
  std::ifstream in("/proc/meminfo");
  std::stringstream text;
  text << in.rdbuf();
  std::uint64_t available = 0, swapFree = 0;
  if (!meminfoField(text.str(), "MemAvailable", &available)) return UINT64_MAX;
  meminfoField(text.str(), "SwapFree", &swapFree);
  return std::min(available + swapFree, cgroupHeadroom());
}

std::string megabytes(std::uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

void requireMemory(const std::string& what, std::uint64_t bytes) {
  if (bytes < kMemoryCheckThreshold) return;
  const std::uint64_t available = availableMemoryBytes();
  if (bytes > available)
    throw OutOfMemoryError(fmt("out of memory: ", what, " needs ", megabytes(bytes), ", but only ",
                               megabytes(available), " are available"));
}

namespace detail {
void setAvailableMemoryForTesting(std::uint64_t bytes) { gTestingAvailable = bytes; }
}  // namespace detail

}  // namespace fedsilo
