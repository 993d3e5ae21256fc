#include "compress/zfp_codec.hpp"

#include "core/error.hpp"

#ifdef FEDSILO_HAVE_ZFP
#include <zfp.h>

#include <cstring>
#include <vector>

#include "compress/wire.hpp"
#endif

namespace fedsilo {

#ifndef FEDSILO_HAVE_ZFP

std::unique_ptr<Compressor> makeZfpCodec(const CompressConfig& config) {
  CompressConfig zfp = config;
  zfp.method = CompressMethod::Zfp;
  validateCompressConfig(zfp);  // throws: this build lacks ZFP
  FEDSILO_ASSERT(false, "zfp accepted by a build without ZFP");
  return nullptr;
}

#else

std::unique_ptr<Compressor> makeZfpCodec(const CompressConfig& config) {
  return std::make_unique<ZfpCodec>(config.tolerance.value_or(0.0), config.bitsOr(CompressConfig::kDefaultZfpRate));
}

namespace {

// A ZFP stream over a byte range, configured as the codec is; closed on scope exit.
class ZfpStream {
 public:
  ZfpStream(double tolerance, int rateBits, void* data, std::size_t bytes)
      : zfp_(zfp_stream_open(nullptr)), bits_(stream_open(data, bytes)) {
    if (tolerance > 0.0)
      zfp_stream_set_accuracy(zfp_, tolerance);
    else
      zfp_stream_set_rate(zfp_, rateBits, zfp_type_float, 1, zfp_false);
    zfp_stream_set_bit_stream(zfp_, bits_);
    zfp_stream_rewind(zfp_);
  }
  ~ZfpStream() {
    zfp_stream_close(zfp_);
    stream_close(bits_);
  }
  ZfpStream(const ZfpStream&) = delete;
  ZfpStream& operator=(const ZfpStream&) = delete;
  zfp_stream* get() { return zfp_; }

 private:
  zfp_stream* zfp_;
  bitstream* bits_;
};

// A 1-D float field over m elements; freed on scope exit.
struct Field1d {
  Field1d(const float* x, std::size_t m) : f(zfp_field_1d(const_cast<float*>(x), zfp_type_float, m)) {}
  ~Field1d() { zfp_field_free(f); }
  Field1d(const Field1d&) = delete;
  Field1d& operator=(const Field1d&) = delete;
  zfp_field* f;
};

}  // namespace

ZfpCodec::ZfpCodec(double tolerance, int rateBits) : tolerance_(tolerance), rateBits_(rateBits) {
  FEDSILO_ASSERT(tolerance > 0.0 || (rateBits >= 1 && rateBits <= 32), "zfp rate ", rateBits);
}

std::uint8_t ZfpCodec::codecId() const { return static_cast<std::uint8_t>(CompressMethod::Zfp); }

// ZFP reads and writes its stream in 64-bit words, so it works on a word-aligned scratch buffer and the
// wire's bytes (at any alignment) are copied to or from it.
namespace {
std::uint64_t* scratchWords(std::size_t bytes) {
  thread_local std::vector<std::uint64_t> words;
  words.resize((bytes + 7) / 8 + 1);
  return words.data();
}
}  // namespace

void ZfpCodec::encodeBlock(const float* x, std::size_t m, Rng&, ByteWriter& w) const {
  if (m == 0) {
    w.u32(0);
    return;
  }
  Field1d field(x, m);
  ZfpStream sizing(tolerance_, rateBits_, nullptr, 0);
  const std::size_t maxBytes = zfp_stream_maximum_size(sizing.get(), field.f);
  std::uint64_t* scratch = scratchWords(maxBytes);
  ZfpStream zfp(tolerance_, rateBits_, scratch, maxBytes);
  const std::size_t bytes = zfp_compress(zfp.get(), field.f);
  if (bytes == 0 || bytes > maxBytes) throw RuntimeError(fmt("zfp: compressing a block of ", m, " floats failed"));
  w.u32(static_cast<std::uint32_t>(bytes));
  std::memcpy(w.extend(bytes), scratch, bytes);
}

void ZfpCodec::decodeBlock(ByteReader& r, std::size_t m, Rng&, float* out) const {
  const std::uint32_t bytes = r.u32();
  const std::uint8_t* data = r.take(bytes);
  if (m == 0) return;
  std::uint64_t* scratch = scratchWords(bytes);
  std::memcpy(scratch, data, bytes);
  Field1d field(out, m);
  ZfpStream zfp(tolerance_, rateBits_, scratch, bytes);
  if (zfp_decompress(zfp.get(), field.f) == 0)
    throw RuntimeError(fmt("zfp: decompressing a block of ", m, " floats from ", bytes, " bytes failed"));
}

// Fixed rate: every 1-D block of 4 values takes the stream's maxbits (ZFP's own figure for the rate,
// which it raises to a minimum for floats), and the stream ends at a whole stream word. Fixed
// accuracy: the length depends on the values.
std::optional<std::size_t> ZfpCodec::sectionBytes(std::size_t m) const {
  if (tolerance_ > 0.0) return std::nullopt;
  if (m == 0) return 4;
  ZfpStream zfp(tolerance_, rateBits_, nullptr, 0);
  unsigned minBits = 0, maxBits = 0, maxPrec = 0;
  int minExp = 0;
  zfp_stream_params(zfp.get(), &minBits, &maxBits, &maxPrec, &minExp);
  const std::size_t bits = (m + 3) / 4 * maxBits;
  const std::size_t words = (bits + stream_word_bits - 1) / stream_word_bits;
  return 4 + words * stream_word_bits / 8;
}

#endif

}  // namespace fedsilo
