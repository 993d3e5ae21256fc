// `topk`: the k = round(ratio · m) largest-magnitude elements of each block (the sparsifier of Stich,
// Cordonnier, Jaggi, "Sparsified SGD with Memory", NeurIPS 2018, used there with error feedback).
// Ties in magnitude go to the lower index, so the kept set is a function of the values alone.
//
// Section per block: k (u32), then either, for k < m, the k indices ascending packed at
// bitWidth(m - 1) bits (byte-aligned at the end) and their k values (f32), or, for k = m, the m values in
// order without indices: 4 + ceil(k w / 8) + 4 k bytes, or 4 + 4 m. Biased (E[decoded] ≠ x): use it
// with error feedback.
#pragma once
#include "compress/compressor.hpp"

namespace fedsilo {

class TopKCodec final : public Compressor {
 public:
  explicit TopKCodec(double ratio);
  const char* name() const override { return "topk"; }

 protected:
  std::uint8_t codecId() const override;
  void encodeBlock(const float* x, std::size_t m, Rng& rng, ByteWriter& w) const override;
  void decodeBlock(ByteReader& r, std::size_t m, Rng& rng, float* out) const override;
  std::optional<std::size_t> sectionBytes(std::size_t m) const override;

 private:
  double ratio_;
};

}  // namespace fedsilo
