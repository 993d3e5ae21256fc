// The grouped bit packing (packCodes, unpackCodes) against the one-code-at-a-time BitPacker and
// BitUnpacker it must agree with byte for byte: every width qsgd uses, counts around the group of 8.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "compress/wire.hpp"
#include "core/rng.hpp"

using namespace fedsilo;

namespace {

std::vector<std::uint32_t> randomCodes(std::size_t n, unsigned width, std::uint64_t seed) {
  Rng rng(seed, 1, 2, Purpose::Compress);
  std::vector<std::uint32_t> codes(n);
  for (auto& c : codes) c = static_cast<std::uint32_t>(rng.next() & ((1ull << width) - 1));
  return codes;
}

}  // namespace

TEST(BitPacking, GroupedPackingWritesTheBytesOfTheCodeByCodePacker) {
  for (unsigned width = 1; width <= 17; ++width)
    for (std::size_t n : {0, 1, 7, 8, 9, 16, 23, 64, 515}) {
      const std::vector<std::uint32_t> codes = randomCodes(n, width, width * 1000 + n);
      std::vector<std::uint8_t> expected(packedBytes(n, width), 0xAB), got(expected.size(), 0xCD);
      BitPacker one(expected.data(), width);
      for (std::uint32_t c : codes) one.put(c);
      one.finish();
      packCodes(codes.data(), n, width, got.data());
      ASSERT_EQ(got, expected) << "width " << width << ", " << n << " codes";
      std::vector<std::uint32_t> back(n, 0xFFFFFFFFu);
      unpackCodes(got.data(), n, width, back.data());
      ASSERT_EQ(back, codes) << "width " << width << ", " << n << " codes";
    }
}
