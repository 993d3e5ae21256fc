// Update compressors: what a silo sends instead of its dense update (docs/compression.md). A compressor
// turns a float vector, cut into the model's layer blocks, into the bytes the wire carries (an
// EncodedUpdate) and those bytes back into a dense vector. No MPI here: the drivers call these.
//
// Every compressor writes the same 8-byte header, then one section per block in block order; what a
// section holds is the compressor's own (its file says, docs/compression.md has the byte counts).
// Randomised compressors (qsgd's stochastic rounding, randk's index sets) draw from one stream keyed by
// (seed, client, round, link), so an update's bytes are the same on any rank that encodes it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/rng.hpp"

namespace fedsilo {

class ByteWriter;
class ByteReader;

// A layer block of the flat parameter vector: elements [offset, offset + size).
struct BlockSpan {
  std::size_t offset = 0;
  std::size_t size = 0;
};
using BlockLayout = std::vector<BlockSpan>;

// Which way an update travels: each direction has its own random stream.
enum class Link : std::uint64_t { Uplink = 0, Downlink = 1 };

// The key of an update's random stream. The server knows all of it (the run's seed, the sender's client
// id, the round), so a decoder regenerates whatever the encoder drew from it without it being sent.
struct StreamKey {
  std::uint64_t seed = 0;
  std::int64_t client = -1;
  std::int64_t round = -1;
  Link link = Link::Uplink;
  Rng rng() const { return Rng(seed, client, round, Purpose::Compress, static_cast<std::uint64_t>(link)); }
};

// One encoded update. `bytes` is exactly what the wire carries (header, scales, values, indices):
// size() is the figure to charge the link with. `layout` and `key` travel with it in memory only: both
// ends know the model's blocks and the stream key, so neither is sent.
struct EncodedUpdate {
  std::vector<std::uint8_t> bytes;
  BlockLayout layout;
  StreamKey key;
  std::size_t n = 0;  // the dense length the update decodes to
  std::size_t size() const { return bytes.size(); }
};

// The wire header every compressor writes first (little-endian): codec id (1 byte), its parameter
// (1 byte: the bit width where it has one, else 0), the block count (2 bytes), the dense length (4 bytes).
inline constexpr std::size_t kHeaderBytes = 8;

class Compressor {
 public:
  virtual ~Compressor() = default;
  virtual const char* name() const = 0;

  // Encodes the blocks of update[0, n); elements outside every block are not sent (they decode to 0).
  // Blocks must lie inside [0, n) in ascending order without overlapping.
  EncodedUpdate encode(const float* update, std::size_t n, const BlockLayout& blocks, const StreamKey& key) const;
  // The dense vector the bytes stand for; out has e.n elements.
  void decode(const EncodedUpdate& e, float* out) const;
  std::vector<float> decode(const EncodedUpdate& e) const;
  // The size encode() gives an update over `blocks` where the layout alone fixes it (every codec but
  // ZFP's fixed-accuracy mode): what the simulated clock charges a silo's link before its update is
  // encoded. nullopt where the size depends on the values.
  std::optional<std::size_t> encodedSize(const BlockLayout& blocks) const;

 protected:
  virtual std::uint8_t codecId() const = 0;
  virtual std::uint8_t parameter() const { return 0; }
  // One block's section: m elements of x, drawing (if at all) from rng, which runs on across blocks.
  virtual void encodeBlock(const float* x, std::size_t m, Rng& rng, ByteWriter& w) const = 0;
  // The inverse: fills out[0, m) from the section, drawing from rng exactly as encodeBlock did.
  virtual void decodeBlock(ByteReader& r, std::size_t m, Rng& rng, float* out) const = 0;
  // The bytes of the section encodeBlock writes for m elements; nullopt where they depend on the values.
  virtual std::optional<std::size_t> sectionBytes(std::size_t m) const = 0;
};

}  // namespace fedsilo
