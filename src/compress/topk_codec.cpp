#include "compress/topk_codec.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

#include "compress/compress_config.hpp"
#include "compress/sparse_block.hpp"
#include "compress/sparse_section.hpp"
#include "compress/wire.hpp"
#include "core/error.hpp"

namespace fedsilo {

namespace {

// The ascending indices of the k largest |x_i|. Each element's key is its magnitude's bits (ordered as
// the magnitudes are, for non-negative floats) above its complemented index, so that one unsigned
// comparison orders by magnitude and then by lower index: nth_element then selects a unique set.
void largestIndices(const float* x, std::size_t m, std::size_t k, std::vector<std::uint32_t>& idx) {
  thread_local std::vector<std::uint64_t> key;
  key.resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &x[i], sizeof bits);
    key[i] = (static_cast<std::uint64_t>(bits & 0x7FFFFFFFu) << 32) | (0xFFFFFFFFu - static_cast<std::uint32_t>(i));
  }
  std::nth_element(key.begin(), key.begin() + static_cast<std::ptrdiff_t>(k - 1), key.end(), std::greater<>());
  idx.resize(k);
  for (std::size_t j = 0; j < k; ++j) idx[j] = 0xFFFFFFFFu - static_cast<std::uint32_t>(key[j]);
  std::sort(idx.begin(), idx.end());
}

}  // namespace

TopKCodec::TopKCodec(double ratio) : ratio_(ratio) { FEDSILO_ASSERT(ratio > 0.0 && ratio <= 1.0, "topk ratio ", ratio); }

std::uint8_t TopKCodec::codecId() const { return static_cast<std::uint8_t>(CompressMethod::TopK); }

void TopKCodec::encodeBlock(const float* x, std::size_t m, Rng&, ByteWriter& w) const {
  const std::size_t k = keptCount(m, ratio_);
  w.u32(static_cast<std::uint32_t>(k));
  if (k == m) {
    w.f32s(x, m);
    return;
  }
  thread_local std::vector<std::uint32_t> idx;
  largestIndices(x, m, k, idx);
  writeIndices(idx, m, w);
  writeGathered(x, idx, w);
}

void TopKCodec::decodeBlock(ByteReader& r, std::size_t m, Rng&, float* out) const {
  const std::size_t k = r.u32();
  if (k > m) throw RuntimeError(fmt("topk: ", k, " elements kept of a block of ", m));
  if (k == m) {
    r.f32s(out, m);
    return;
  }
  thread_local std::vector<std::uint32_t> idx;
  readIndices(r, k, m, idx);
  scatterValues(r, idx, 1.0f, out);
}

}  // namespace fedsilo
