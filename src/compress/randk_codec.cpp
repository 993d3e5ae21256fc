#include "compress/randk_codec.hpp"

#include "compress/compress_config.hpp"
#include "compress/sparse_block.hpp"
#include "compress/sparse_section.hpp"
#include "compress/wire.hpp"
#include "core/error.hpp"

namespace fedsilo {

namespace {

// A uniform k-subset of [0, m), ascending: Floyd's algorithm (k draws, each set member marked in a
// bitmap), then the bitmap read in order.
void randomIndices(std::size_t m, std::size_t k, Rng& rng, std::vector<std::uint32_t>& idx) {
  thread_local std::vector<std::uint64_t> mark;
  mark.assign((m + 63) / 64, 0);
  auto test = [&](std::uint64_t i) { return (mark[i >> 6] >> (i & 63)) & 1u; };
  auto set = [&](std::uint64_t i) { mark[i >> 6] |= 1ull << (i & 63); };
  for (std::uint64_t j = m - k; j < m; ++j) {
    const std::uint64_t t = rng.below(j + 1);
    set(test(t) ? j : t);
  }
  idx.clear();
  for (std::size_t word = 0; word < mark.size(); ++word)
    for (std::uint64_t bits = mark[word]; bits != 0; bits &= bits - 1)
      idx.push_back(static_cast<std::uint32_t>(word * 64 + static_cast<unsigned>(__builtin_ctzll(bits))));
}

}  // namespace

RandKCodec::RandKCodec(double ratio) : ratio_(ratio) {
  FEDSILO_ASSERT(ratio > 0.0 && ratio <= 1.0, "randk ratio ", ratio);
}

std::uint8_t RandKCodec::codecId() const { return static_cast<std::uint8_t>(CompressMethod::RandK); }

void RandKCodec::encodeBlock(const float* x, std::size_t m, Rng& rng, ByteWriter& w) const {
  const std::size_t k = keptCount(m, ratio_);
  w.u32(static_cast<std::uint32_t>(k));
  thread_local std::vector<std::uint32_t> idx;
  randomIndices(m, k, rng, idx);
  writeGathered(x, idx, w);
}

void RandKCodec::decodeBlock(ByteReader& r, std::size_t m, Rng& rng, float* out) const {
  const std::size_t k = r.u32();
  if (k != keptCount(m, ratio_))
    throw RuntimeError(fmt("randk: ", k, " values for a block of ", m, " at ratio ", ratio_, " (expected ",
                           keptCount(m, ratio_), ")"));
  thread_local std::vector<std::uint32_t> idx;
  randomIndices(m, k, rng, idx);
  scatterValues(r, idx, static_cast<float>(static_cast<double>(m) / static_cast<double>(k)), out);
}

std::optional<std::size_t> RandKCodec::sectionBytes(std::size_t m) const { return 4 + 4 * keptCount(m, ratio_); }

}  // namespace fedsilo
