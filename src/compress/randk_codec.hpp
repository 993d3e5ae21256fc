// `randk`: k = round(ratio · m) elements of each block chosen uniformly at random without replacement
// (the random-k sparsifier of Stich, Cordonnier, Jaggi, NeurIPS 2018), decoded scaled by m / k so that
// E[decoded] = x (unbiased; its variance grows as m / k).
//
// The index set is drawn from the update's keyed stream (seed, client, round, link), which the server
// knows, so the decoder draws the same set and no index is sent. Section per block: k (u32) and the k
// values at the ascending indices (f32): 4 + 4 k bytes.
#pragma once
#include "compress/compressor.hpp"

namespace fedsilo {

class RandKCodec final : public Compressor {
 public:
  explicit RandKCodec(double ratio);
  const char* name() const override { return "randk"; }

 protected:
  std::uint8_t codecId() const override;
  void encodeBlock(const float* x, std::size_t m, Rng& rng, ByteWriter& w) const override;
  void decodeBlock(ByteReader& r, std::size_t m, Rng& rng, float* out) const override;
  std::optional<std::size_t> sectionBytes(std::size_t m) const override;

 private:
  double ratio_;
};

}  // namespace fedsilo
