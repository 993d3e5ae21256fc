// io/checksum: CRC-32C against the published check value, the SSE4.2 path against the table, chaining,
// and whole files.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "io/checksum.hpp"
#include "support/test_support.hpp"

using namespace fedsilo;

TEST(Crc32c, MatchesTheStandardCheckValue) {
  // The check value of CRC-32C (RFC 3720, Appendix B.4; "123456789" in the CRC catalogues).
  const std::string nine = "123456789";
  EXPECT_EQ(crc32c(nine.data(), nine.size()), 0xE3069283u);
  EXPECT_EQ(crc32cPortable(nine.data(), nine.size()), 0xE3069283u);
  // RFC 3720 B.4: 32 bytes of zeros.
  const std::vector<unsigned char> zeros(32, 0);
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  EXPECT_EQ(crc32c(nullptr, 0), 0u);
}

TEST(Crc32c, FastPathEqualsTableAtEveryLengthAndAlignment) {
  std::mt19937 gen(7);
  std::vector<unsigned char> bytes(4096 + 64);
  for (auto& b : bytes) b = static_cast<unsigned char>(gen());
  for (std::size_t offset = 0; offset < 9; ++offset)
    for (std::size_t n : {0u, 1u, 7u, 8u, 9u, 63u, 64u, 1000u, 4096u})
      EXPECT_EQ(crc32c(bytes.data() + offset, n), crc32cPortable(bytes.data() + offset, n)) << offset << " " << n;
}

TEST(Crc32c, ChainsAndSeesEveryByte) {
  std::vector<float> v{1.5f, -2.0f, 3.25f, 0.0f};
  const std::uint32_t whole = crc32cOf(v);
  const std::uint32_t chained = crc32c(v.data() + 2, 2 * sizeof(float), crc32c(v.data(), 2 * sizeof(float)));
  EXPECT_EQ(chained, whole);
  v[3] = -0.0f;  // one bit differs
  EXPECT_NE(crc32cOf(v), whole);
}

TEST(Crc32c, OfAFileEqualsOfItsBytes) {
  const std::string path = test::tempDir("crc") + "/f.bin";
  std::vector<char> bytes(3 * (1 << 20) + 17);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 31 + 7);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  std::uint32_t crc = 1;
  std::string error;
  ASSERT_TRUE(crc32cOfFile(path, crc, error)) << error;
  EXPECT_EQ(crc, crc32c(bytes.data(), bytes.size()));
  EXPECT_FALSE(crc32cOfFile(path + ".missing", crc, error));
  EXPECT_EQ(error, "No such file or directory");
}
