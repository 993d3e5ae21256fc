// `none`: the blocks' floats as they are. Section per block: its m floats (4 m bytes).
#pragma once
#include "compress/compressor.hpp"

namespace fedsilo {

class IdentityCodec final : public Compressor {
 public:
  const char* name() const override { return "none"; }

 protected:
  std::uint8_t codecId() const override;
  void encodeBlock(const float* x, std::size_t m, Rng& rng, ByteWriter& w) const override;
  void decodeBlock(ByteReader& r, std::size_t m, Rng& rng, float* out) const override;
  std::optional<std::size_t> sectionBytes(std::size_t m) const override;
};

}  // namespace fedsilo
