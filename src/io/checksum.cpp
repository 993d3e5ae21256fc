#include "io/checksum.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace fedsilo {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "checkpoint checksums are computed over the in-memory bytes, which must be little-endian");

namespace {

constexpr std::uint32_t kReflectedPolynomial = 0x82F63B78u;

std::array<std::uint32_t, 256> makeTable() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ kReflectedPolynomial : c >> 1;
    t[i] = c;
  }
  return t;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t crc32cHardware(const unsigned char* p, std::size_t n,
                                                                std::uint32_t crc) {
  std::uint64_t c = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    c = _mm_crc32_u64(c, word);
  }
  auto c32 = static_cast<std::uint32_t>(c);
  for (; n > 0; --n, ++p) c32 = _mm_crc32_u8(c32, *p);
  return ~c32;
}

bool haveHardwareCrc() {
  static const bool have = __builtin_cpu_supports("sse4.2");
  return have;
}
#endif

}  // namespace

std::uint32_t crc32cPortable(const void* data, std::size_t bytes, std::uint32_t crc) {
  static const std::array<std::uint32_t, 256> table = makeTable();
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t c = ~crc;
  for (std::size_t i = 0; i < bytes; ++i) c = table[(c ^ p[i]) & 0xFFu] ^ (c >> 8);
  return ~c;
}

std::uint32_t crc32c(const void* data, std::size_t bytes, std::uint32_t crc) {
#if defined(__x86_64__)
  if (haveHardwareCrc()) return crc32cHardware(static_cast<const unsigned char*>(data), bytes, crc);
#endif
  return crc32cPortable(data, bytes, crc);
}

bool crc32cOfFile(const std::string& path, std::uint32_t& crc, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = std::strerror(errno);
    return false;
  }
  std::vector<unsigned char> block(std::size_t{1} << 20);
  crc = 0;
  while (true) {
    const ssize_t got = ::read(fd, block.data(), block.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      error = std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (got == 0) break;
    crc = crc32c(block.data(), static_cast<std::size_t>(got), crc);
  }
  ::close(fd);
  return true;
}

}  // namespace fedsilo
