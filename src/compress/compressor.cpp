#include "compress/compressor.hpp"

#include <algorithm>
#include <limits>

#include "compress/wire.hpp"
#include "core/error.hpp"

namespace fedsilo {

namespace {

void checkLayout(const BlockLayout& blocks, std::size_t n) {
  FEDSILO_ASSERT(n <= std::numeric_limits<std::uint32_t>::max(), "update of ", n, " elements");
  FEDSILO_ASSERT(blocks.size() <= std::numeric_limits<std::uint16_t>::max(), blocks.size(), " blocks");
  std::size_t end = 0;
  for (const BlockSpan& b : blocks) {
    FEDSILO_ASSERT(b.offset >= end && b.size <= n && b.offset <= n - b.size, "block [", b.offset, ", +",
                   b.size, ") of an update of ", n, " (blocks ascending, disjoint, inside)");
    end = b.offset + b.size;
  }
}

}  // namespace

EncodedUpdate Compressor::encode(const float* update, std::size_t n, const BlockLayout& blocks,
                                 const StreamKey& key) const {
  checkLayout(blocks, n);
  EncodedUpdate e;
  e.layout = blocks;
  e.key = key;
  e.n = n;
  ByteWriter w(e.bytes);
  w.u8(codecId());
  w.u8(parameter());
  w.u16(static_cast<std::uint16_t>(blocks.size()));
  w.u32(static_cast<std::uint32_t>(n));
  Rng rng = key.rng();
  for (const BlockSpan& b : blocks) encodeBlock(update + b.offset, b.size, rng, w);
  return e;
}

void Compressor::decode(const EncodedUpdate& e, float* out) const {
  ByteReader r(e.bytes.data(), e.bytes.size());
  const std::uint8_t id = r.u8(), param = r.u8();
  const std::uint16_t blocks = r.u16();
  const std::uint32_t n = r.u32();
  if (id != codecId() || param != parameter() || blocks != e.layout.size() || n != e.n)
    throw RuntimeError(fmt(name(), ": the encoded update's header (codec ", int(id), ", parameter ", int(param), ", ",
                           blocks, " blocks, ", n, " elements) does not match this decoder (codec ", int(codecId()),
                           ", parameter ", int(parameter()), ", ", e.layout.size(), " blocks, ", e.n, " elements)"));
  std::fill(out, out + e.n, 0.0f);
  Rng rng = e.key.rng();
  for (const BlockSpan& b : e.layout) decodeBlock(r, b.size, rng, out + b.offset);
  if (r.left() != 0) throw RuntimeError(fmt(name(), ": ", r.left(), " bytes after the last block of an encoded update"));
}

std::optional<std::size_t> Compressor::encodedSize(const BlockLayout& blocks) const {
  std::size_t bytes = kHeaderBytes;
  for (const BlockSpan& b : blocks) {
    const std::optional<std::size_t> section = sectionBytes(b.size);
    if (!section) return std::nullopt;
    bytes += *section;
  }
  return bytes;
}

std::vector<float> Compressor::decode(const EncodedUpdate& e) const {
  std::vector<float> out(e.n);
  decode(e, out.data());
  return out;
}

}  // namespace fedsilo
