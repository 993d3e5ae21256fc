#include "compress/identity_codec.hpp"

#include "compress/compress_config.hpp"
#include "compress/wire.hpp"

namespace fedsilo {

std::uint8_t IdentityCodec::codecId() const { return static_cast<std::uint8_t>(CompressMethod::None); }

void IdentityCodec::encodeBlock(const float* x, std::size_t m, Rng&, ByteWriter& w) const { w.f32s(x, m); }

void IdentityCodec::decodeBlock(ByteReader& r, std::size_t m, Rng&, float* out) const { r.f32s(out, m); }

std::optional<std::size_t> IdentityCodec::sectionBytes(std::size_t m) const { return 4 * m; }

}  // namespace fedsilo
