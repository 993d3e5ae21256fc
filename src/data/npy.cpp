// .npy reader for integer vectors (partition files). Format (numpy/lib/format.py, NEP 1): magic
// "\x93NUMPY", major and minor version bytes, header length (uint16 LE in v1, uint32 LE in v2), then
// an ASCII Python dict literal {'descr': '<i4', 'fortran_order': False, 'shape': (n,), } padded with
// spaces and ended by '\n', then the raw array.
#include <cstring>

#include "core/error.hpp"
#include "data/loader_util.hpp"
#include "data/loaders.hpp"

namespace fedsilo {

namespace {

// Parser for the header dict: string keys; values are strings, True/False, or tuples of integers.
class HeaderParser {
 public:
  HeaderParser(const std::string& h, const std::string& path) : h_(h), path_(path) {}

  void parse(std::string& descr, bool& fortran, std::vector<long long>& shape, bool& haveDescr, bool& haveFortran,
             bool& haveShape) {
    ws();
    expect('{');
    for (;;) {
      ws();
      if (peek() == '}') break;
      const std::string key = str();
      ws();
      expect(':');
      ws();
      if (key == "descr") {
        if (peek() != '\'' && peek() != '"') fail("unsupported dtype (structured arrays are not accepted)");
        descr = str();
        haveDescr = true;
      } else if (key == "fortran_order") {
        if (h_.compare(i_, 4, "True") == 0) {
          fortran = true;
          i_ += 4;
        } else if (h_.compare(i_, 5, "False") == 0) {
          fortran = false;
          i_ += 5;
        } else {
          fail("fortran_order must be True or False");
        }
        haveFortran = true;
      } else if (key == "shape") {
        shape = tuple();
        haveShape = true;
      } else {
        fail("unexpected key '" + key + "'");
      }
      ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      ws();
      if (peek() != '}') fail("expected ',' or '}'");
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw DataError(fmt("'", path_, "': bad .npy header at character ", i_, ": ", what));
  }
  char peek() const { return i_ < h_.size() ? h_[i_] : '\0'; }
  void ws() {
    while (i_ < h_.size() && (h_[i_] == ' ' || h_[i_] == '\t' || h_[i_] == '\n')) ++i_;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string str() {
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string");
    ++i_;
    const std::size_t start = i_;
    while (i_ < h_.size() && h_[i_] != q) ++i_;
    if (i_ >= h_.size()) fail("unterminated string");
    return h_.substr(start, i_++ - start);
  }
  std::vector<long long> tuple() {
    std::vector<long long> out;
    expect('(');
    for (;;) {
      ws();
      if (peek() == ')') {
        ++i_;
        return out;
      }
      if (!(peek() >= '0' && peek() <= '9')) fail("expected a non-negative integer in shape");
      long long v = 0;
      while (peek() >= '0' && peek() <= '9') {
        v = v * 10 + (h_[i_++] - '0');
        if (v > (1LL << 48)) fail("shape dimension too large");
      }
      out.push_back(v);
      ws();
      if (peek() == ',') {
        ++i_;
      } else if (peek() != ')') {
        fail("expected ',' or ')' in shape");
      }
    }
  }

  const std::string& h_;
  const std::string& path_;
  std::size_t i_ = 0;
};

template <typename T>
std::int64_t loadLe(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // x86-64 and every platform we build on are little-endian
  return static_cast<std::int64_t>(v);
}

}  // namespace

std::vector<std::int64_t> readNpyInts(const std::string& path) {
  detail::requireFile(path, ".npy");
  const std::string bytes = detail::readFileBytes(path);
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    throw DataError(fmt("'", path, "' is not a .npy file (bad magic)"));
  const int major = u[6];
  std::size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = std::size_t(u[8]) | (std::size_t(u[9]) << 8);
    headerStart = 10;
  } else if (major == 2) {
    if (bytes.size() < 12) throw DataError(fmt("'", path, "': truncated .npy header"));
    headerLen = std::size_t(u[8]) | (std::size_t(u[9]) << 8) | (std::size_t(u[10]) << 16) | (std::size_t(u[11]) << 24);
    headerStart = 12;
  } else {
    throw DataError(fmt("'", path, "': unsupported .npy format version ", major, ".", int(u[7]), " (expected 1.x or 2.x)"));
  }
  if (headerStart + headerLen > bytes.size())
    throw DataError(fmt("'", path, "': truncated .npy header (declares ", headerLen, " bytes, file has ",
                        bytes.size() - headerStart, " after the preamble)"));
  const std::string header = bytes.substr(headerStart, headerLen);
  std::string descr;
  bool fortran = false, haveDescr = false, haveFortran = false, haveShape = false;
  std::vector<long long> shape;
  HeaderParser(header, path).parse(descr, fortran, shape, haveDescr, haveFortran, haveShape);
  if (!haveDescr || !haveFortran || !haveShape)
    throw DataError(fmt("'", path, "': .npy header lacks one of 'descr', 'fortran_order', 'shape'"));
  if (fortran) throw DataError(fmt("'", path, "': fortran_order arrays are not supported"));
  if (shape.size() != 1)
    throw DataError(fmt("'", path, "': expected a 1-D array, got ", shape.size(), " dimensions"));
  int itemSize = 0;
  bool isSigned = true;
  if (descr == "|i1" || descr == "<i1") itemSize = 1;
  else if (descr == "<i2") itemSize = 2;
  else if (descr == "<i4") itemSize = 4;
  else if (descr == "<i8") itemSize = 8;
  else if (descr == "|u1" || descr == "<u1") itemSize = 1, isSigned = false;
  else if (descr == "<u2") itemSize = 2, isSigned = false;
  else if (descr == "<u4") itemSize = 4, isSigned = false;
  else
    throw DataError(fmt("'", path, "': unsupported .npy dtype '", descr,
                        "' (expected little-endian int8/16/32/64 or uint8/16/32)"));
  const std::size_t n = static_cast<std::size_t>(shape[0]);
  const std::size_t dataStart = headerStart + headerLen;
  const std::size_t expected = dataStart + n * static_cast<std::size_t>(itemSize);
  if (bytes.size() != expected)
    throw DataError(fmt("'", path, "': .npy file is ", bytes.size(), " bytes, but its header (", n, " x ", descr,
                        ") requires exactly ", expected));
  std::vector<std::int64_t> out(n);
  const unsigned char* p = u + dataStart;
  for (std::size_t i = 0; i < n; ++i, p += itemSize) {
    switch (itemSize) {
      case 1: out[i] = isSigned ? loadLe<std::int8_t>(p) : loadLe<std::uint8_t>(p); break;
      case 2: out[i] = isSigned ? loadLe<std::int16_t>(p) : loadLe<std::uint16_t>(p); break;
      case 4: out[i] = isSigned ? loadLe<std::int32_t>(p) : loadLe<std::uint32_t>(p); break;
      default: out[i] = loadLe<std::int64_t>(p); break;
    }
  }
  return out;
}

}  // namespace fedsilo
