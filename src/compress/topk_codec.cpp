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

std::uint32_t magnitudeBits(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits & 0x7FFFFFFFu;  // ordered as the magnitudes are, for every non-NaN float
}

// The ascending indices of the k largest |x_i|, ties in magnitude to the lower index (so the kept set
// is a function of the values alone). nth_element over the magnitudes' bits finds the k-th largest, t;
// one pass in index order then keeps every element above t and the first elements equal to t.
// A histogram of the top bits (exponent and 3 mantissa bits) first narrows the nth_element to the
// magnitudes at or above the bin that holds the k-th largest.
void largestIndices(const float* x, std::size_t m, std::size_t k, std::vector<std::uint32_t>& idx) {
  constexpr unsigned kShift = 20;
  thread_local std::vector<std::uint32_t> hist, mag;
  hist.assign((0x7FFFFFFFu >> kShift) + 1, 0);
  for (std::size_t i = 0; i < m; ++i) ++hist[magnitudeBits(x[i]) >> kShift];
  std::size_t bin = hist.size() - 1, count = hist[bin];
  while (count < k) count += hist[--bin];
  mag.clear();
  for (std::size_t i = 0; i < m; ++i)
    if ((magnitudeBits(x[i]) >> kShift) >= bin) mag.push_back(magnitudeBits(x[i]));
  std::nth_element(mag.begin(), mag.begin() + static_cast<std::ptrdiff_t>(k - 1), mag.end(), std::greater<>());
  const std::uint32_t t = mag[k - 1];
  std::size_t above = 0;
  for (std::size_t j = 0; j < k; ++j) above += mag[j] > t;
  std::size_t ties = k - above;  // how many elements equal to t are kept
  idx.clear();
  for (std::size_t i = 0; i < m; ++i) {
    const std::uint32_t b = magnitudeBits(x[i]);
    if (b > t || (b == t && ties > 0)) {
      if (b == t) --ties;
      idx.push_back(static_cast<std::uint32_t>(i));
    }
  }
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

std::optional<std::size_t> TopKCodec::sectionBytes(std::size_t m) const {
  const std::size_t k = keptCount(m, ratio_);
  if (k == m) return 4 + 4 * m;
  return 4 + packedBytes(k, bitWidth(m - 1)) + 4 * k;
}

}  // namespace fedsilo
