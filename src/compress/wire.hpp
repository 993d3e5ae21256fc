// Byte and bit streams of the compressors' wire format: little-endian integers and IEEE floats, and
// codes of a fixed bit width packed least-significant bit first, a section ending on a byte boundary.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/error.hpp"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the compressors' wire format copies floats as little-endian bytes: a big-endian host needs byte swaps"
#endif

namespace fedsilo {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::uint8_t>& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { raw(&v, sizeof v); }
  void u32(std::uint32_t v) { raw(&v, sizeof v); }
  void f32(float v) { raw(&v, sizeof v); }
  void f32s(const float* v, std::size_t n) { raw(v, n * sizeof(float)); }
  // Room for n more bytes, to be filled in place (bit packers, ZFP's stream).
  std::uint8_t* extend(std::size_t n) {
    out_.resize(out_.size() + n);
    return out_.data() + out_.size() - n;
  }
  void shrinkBy(std::size_t n) { out_.resize(out_.size() - n); }

 private:
  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  std::vector<std::uint8_t>& out_;
};

class ByteReader {
 public:
  ByteReader(const std::uint8_t* p, std::size_t n) : p_(p), end_(p + n) {}
  std::uint8_t u8() { return *take(1); }
  std::uint16_t u16() { return copy<std::uint16_t>(); }
  std::uint32_t u32() { return copy<std::uint32_t>(); }
  float f32() { return copy<float>(); }
  void f32s(float* v, std::size_t n) { std::memcpy(v, take(n * sizeof(float)), n * sizeof(float)); }
  // The next n bytes, consumed.
  const std::uint8_t* take(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n)
      throw RuntimeError(fmt("encoded update: ", n, " more bytes expected, ", end_ - p_, " left (truncated)"));
    const std::uint8_t* at = p_;
    p_ += n;
    return at;
  }
  std::size_t left() const { return static_cast<std::size_t>(end_ - p_); }

 private:
  template <typename T>
  T copy() {
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

// Bytes that `count` codes of `width` bits take when packed.
inline std::size_t packedBytes(std::size_t count, unsigned width) { return (count * width + 7) / 8; }

// The number of bits that hold every value in [0, maxValue] (at least 1).
inline unsigned bitWidth(std::uint64_t maxValue) {
  unsigned w = 1;
  while (w < 64 && (maxValue >> w) != 0) ++w;
  return w;
}

// Packs codes of `width` <= 32 bits into dst (packedBytes(count, width) bytes, written in full).
class BitPacker {
 public:
  BitPacker(std::uint8_t* dst, unsigned width) : dst_(dst), width_(width) {}
  // Whole 32-bit words go out as they fill (fill_ stays below 32, so a 32-bit code always fits).
  void put(std::uint32_t code) {
    acc_ |= static_cast<std::uint64_t>(code) << fill_;
    fill_ += width_;
    if (fill_ >= 32) {
      const auto word = static_cast<std::uint32_t>(acc_);
      std::memcpy(dst_, &word, 4);
      dst_ += 4;
      acc_ >>= 32;
      fill_ -= 32;
    }
  }
  void finish() {
    for (; fill_ > 0; fill_ = fill_ > 8 ? fill_ - 8 : 0) {
      *dst_++ = static_cast<std::uint8_t>(acc_);
      acc_ >>= 8;
    }
    acc_ = 0;
  }

 private:
  std::uint8_t* dst_;
  unsigned width_;
  std::uint64_t acc_ = 0;
  unsigned fill_ = 0;
};

class BitUnpacker {
 public:
  BitUnpacker(const std::uint8_t* src, unsigned width) : src_(src), width_(width), mask_((1ull << width) - 1) {}
  std::uint32_t get() {
    while (fill_ < width_) {
      acc_ |= static_cast<std::uint64_t>(*src_++) << fill_;
      fill_ += 8;
    }
    const auto code = static_cast<std::uint32_t>(acc_ & mask_);
    acc_ >>= width_;
    fill_ -= width_;
    return code;
  }

 private:
  const std::uint8_t* src_;
  unsigned width_;
  std::uint64_t mask_;
  std::uint64_t acc_ = 0;
  unsigned fill_ = 0;
};

// Packs codes[0, n) of `width` bits into dst, as `n` BitPacker::put calls and finish() would (the
// packedBytes(n, width) bytes, written in full). Eight codes fill exactly `width` bytes, so for width
// <= 16 each group of eight is assembled in one 128-bit word without a branch per code; the rest go
// through BitPacker.
inline void packCodes(const std::uint32_t* codes, std::size_t n, unsigned width, std::uint8_t* dst) {
  std::size_t i = 0;
  if (width <= 16)
    for (; i + 8 <= n; i += 8, dst += width) {
      unsigned __int128 group = 0;
      for (unsigned j = 0; j < 8; ++j) group |= static_cast<unsigned __int128>(codes[i + j]) << (j * width);
      std::memcpy(dst, &group, width);  // little-endian: the low `width` bytes
    }
  BitPacker tail(dst, width);
  for (; i < n; ++i) tail.put(codes[i]);
  tail.finish();
}

// The inverse: n codes of `width` bits from src (packedBytes(n, width) bytes) into out.
inline void unpackCodes(const std::uint8_t* src, std::size_t n, unsigned width, std::uint32_t* out) {
  std::size_t i = 0;
  if (width <= 16) {
    const auto mask = static_cast<std::uint32_t>((1u << width) - 1u);
    for (; i + 8 <= n; i += 8, src += width) {
      unsigned __int128 group = 0;
      std::memcpy(&group, src, width);
      for (unsigned j = 0; j < 8; ++j) out[i + j] = static_cast<std::uint32_t>(group >> (j * width)) & mask;
    }
  }
  BitUnpacker tail(src, width);
  for (; i < n; ++i) out[i] = tail.get();
}

}  // namespace fedsilo
