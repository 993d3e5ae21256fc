// The pieces of a sparse block section that topk and randk share: indices packed at the block's index
// width, and values gathered at (or scattered to) those indices.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "compress/wire.hpp"

namespace fedsilo {

// idx ascending, each < m, packed at bitWidth(m - 1) bits.
inline void writeIndices(const std::vector<std::uint32_t>& idx, std::size_t m, ByteWriter& w) {
  const unsigned width = bitWidth(m - 1);
  BitPacker pack(w.extend(packedBytes(idx.size(), width)), width);
  for (std::uint32_t i : idx) pack.put(i);
  pack.finish();
}

// The inverse; an index outside the block (a corrupt section) is an error.
inline void readIndices(ByteReader& r, std::size_t k, std::size_t m, std::vector<std::uint32_t>& idx) {
  const unsigned width = bitWidth(m - 1);
  BitUnpacker unpack(r.take(packedBytes(k, width)), width);
  idx.resize(k);
  for (std::size_t j = 0; j < k; ++j) {
    idx[j] = unpack.get();
    if (idx[j] >= m) throw RuntimeError(fmt("sparse section: index ", idx[j], " outside a block of ", m));
  }
}

inline void writeGathered(const float* x, const std::vector<std::uint32_t>& idx, ByteWriter& w) {
  std::uint8_t* v = w.extend(idx.size() * sizeof(float));
  for (std::size_t j = 0; j < idx.size(); ++j) std::memcpy(v + j * sizeof(float), x + idx[j], sizeof(float));
}

// out[idx_j] = scale · v_j for the k values that follow in r.
inline void scatterValues(ByteReader& r, const std::vector<std::uint32_t>& idx, float scale, float* out) {
  const std::uint8_t* v = r.take(idx.size() * sizeof(float));
  for (std::size_t j = 0; j < idx.size(); ++j) {
    float value;
    std::memcpy(&value, v + j * sizeof(float), sizeof value);
    out[idx[j]] = value * scale;
  }
}

}  // namespace fedsilo
