// ZeroedBuffer (core/zeroed_buffer.hpp): n zeros at a 64-byte-aligned address, re-assignable and
// movable, and a large one's pages are not resident until written (what keeps a --dry-run from
// paying for the model's activations).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "core/zeroed_buffer.hpp"

using namespace fedsilo;

namespace {

bool allZero(const ZeroedBuffer<float>& b) {
  for (std::size_t i = 0; i < b.size(); ++i)
    if (b.data()[i] != 0.0f || std::signbit(b.data()[i])) return false;
  return true;
}

// Pages of [p, p + bytes) that are resident now (mincore(2)), whole pages inside the range only.
std::size_t residentPages(const void* p, std::size_t bytes) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const std::uintptr_t lo = (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
  const std::uintptr_t hi = (reinterpret_cast<std::uintptr_t>(p) + bytes) / page * page;
  if (hi <= lo) return 0;
  std::vector<unsigned char> in((hi - lo) / page);
  if (mincore(reinterpret_cast<void*>(lo), hi - lo, in.data()) != 0) return SIZE_MAX;
  std::size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

TEST(ZeroedBuffer, HoldsAlignedZerosAndCanBeReassigned) {
  ZeroedBuffer<float> b;
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.data(), nullptr);
  for (std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(37), std::size_t(1) << 20}) {
    b.assignZeros(n);
    ASSERT_EQ(b.size(), n);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % ZeroedBuffer<float>::kAlign, 0u);
    EXPECT_TRUE(allZero(b)) << n;
    // Written all over: the next assignment must hand out zeros again, even from reused memory.
    for (std::size_t i = 0; i < n; ++i) b.data()[i] = -1.5f;
  }
  b.assignZeros(0);
  EXPECT_EQ(b.size(), 0u);
}

TEST(ZeroedBuffer, MovesTakeTheBlock) {
  ZeroedBuffer<float> a;
  a.assignZeros(100);
  a.data()[7] = 3.0f;
  const float* at = a.data();
  ZeroedBuffer<float> b(std::move(a));
  EXPECT_EQ(b.data(), at);
  EXPECT_EQ(b.size(), 100u);
  EXPECT_EQ(b.data()[7], 3.0f);
  EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move): a moved-from buffer is empty
  std::vector<ZeroedBuffer<float>> v(3);
  v[1] = std::move(b);
  v.resize(10);  // the vector moves its elements when it grows
  EXPECT_EQ(v[1].data(), at);
}

TEST(ZeroedBuffer, ALargeBufferTakesNoPagesUntilWritten) {
  const std::size_t n = std::size_t(64) << 20 >> 2;  // 64 MB of floats
  ZeroedBuffer<float> b;
  b.assignZeros(n);
  const std::size_t bytes = n * sizeof(float);
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  EXPECT_EQ(residentPages(b.data(), bytes), 0u) << "assignZeros wrote the zeros itself";
  std::memset(b.data(), 0, bytes / 2);
  EXPECT_GE(residentPages(b.data(), bytes), bytes / 2 / page - 1);  // mincore sees what was written
}

}  // namespace
