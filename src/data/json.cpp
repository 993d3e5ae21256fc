#include "data/json.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"

namespace fedsilo::json {

const Value* Value::find(const std::string& key) const {
  for (auto it = members.rbegin(); it != members.rend(); ++it)
    if (it->first == key) return &it->second;
  return nullptr;
}

const char* typeName(Value::Type t) {
  switch (t) {
    case Value::Type::Null: return "null";
    case Value::Type::Bool: return "boolean";
    case Value::Type::Number: return "number";
    case Value::Type::String: return "string";
    case Value::Type::Array: return "array";
    case Value::Type::Object: return "object";
  }
  return "?";
}

namespace {

// Recursive descent over the grammar of RFC 8259 section 2-7. Depth is bounded so that hostile input
// ("[[[[...") cannot overflow the stack.
class Parser {
 public:
  Parser(const std::string& text, const std::string& source) : s_(text), src_(source) {}

  Value parseDocument() {
    skipWs();
    Value v = parseValue(0);
    skipWs();
    if (pos_ != s_.size()) fail("unexpected data after the top-level value");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 256;

  [[noreturn]] void fail(const std::string& what) const { failAt(pos_, what); }
  [[noreturn]] void failAt(std::size_t at, const std::string& what) const {
    throw DataError(fmt("'", src_, "': malformed JSON at byte ", at, ": ", what));
  }

  bool atEnd() const { return pos_ >= s_.size(); }
  char peek() const { return atEnd() ? '\0' : s_[pos_]; }

  void skipWs() {
    while (!atEnd()) {
      const char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        ++pos_;
      else
        break;
    }
  }

  void expect(char c) {
    if (atEnd()) fail(fmt("unexpected end of input, expected '", c, "'"));
    if (s_[pos_] != c) fail(fmt("expected '", c, "', found '", s_[pos_], "'"));
    ++pos_;
  }

  void literal(const char* word) {
    const std::size_t n = std::strlen(word);
    if (s_.compare(pos_, n, word) != 0) fail("invalid literal");
    pos_ += n;
  }

  Value parseValue(int depth) {
    if (depth > kMaxDepth) fail("nesting too deep");
    if (atEnd()) fail("unexpected end of input, expected a value");
    Value v;
    v.offset = pos_;
    const char c = s_[pos_];
    if (c == '{') {
      v.type = Value::Type::Object;
      parseObject(v, depth);
    } else if (c == '[') {
      v.type = Value::Type::Array;
      parseArray(v, depth);
    } else if (c == '"') {
      v.type = Value::Type::String;
      v.string = parseString();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.type = Value::Type::Number;
      v.number = parseNumber();
    } else if (c == 't') {
      literal("true");
      v.type = Value::Type::Bool;
      v.boolean = true;
    } else if (c == 'f') {
      literal("false");
      v.type = Value::Type::Bool;
    } else if (c == 'n') {
      literal("null");
    } else {
      fail(fmt("unexpected character '", c, "'"));
    }
    return v;
  }

  void parseObject(Value& v, int depth) {
    ++pos_;  // '{'
    skipWs();
    if (peek() == '}') {
      ++pos_;
      return;
    }
    for (;;) {
      skipWs();
      if (peek() != '"') fail("expected a string key");
      std::string key = parseString();
      skipWs();
      expect(':');
      skipWs();
      v.members.emplace_back(std::move(key), parseValue(depth + 1));
      skipWs();
      if (atEnd()) fail("unexpected end of input inside an object");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == '}') {
        ++pos_;
        return;
      }
      fail("expected ',' or '}' in an object");
    }
  }

  void parseArray(Value& v, int depth) {
    ++pos_;  // '['
    v.packed = true;  // until a non-number element shows up
    skipWs();
    if (peek() == ']') {
      ++pos_;
      return;
    }
    for (;;) {
      skipWs();
      const char c = peek();
      if (v.packed && (c == '-' || (c >= '0' && c <= '9'))) {
        v.numbers.push_back(parseNumber());
      } else {
        if (v.packed) {
          // First non-number: unpack what we have into nodes.
          v.items.reserve(v.numbers.size() + 1);
          for (double x : v.numbers) {
            Value n;
            n.type = Value::Type::Number;
            n.number = x;
            n.offset = v.offset;
            v.items.push_back(std::move(n));
          }
          v.numbers.clear();
          v.numbers.shrink_to_fit();
          v.packed = false;
        }
        v.items.push_back(parseValue(depth + 1));
      }
      skipWs();
      if (atEnd()) fail("unexpected end of input inside an array");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == ']') {
        ++pos_;
        return;
      }
      fail("expected ',' or ']' in an array");
    }
  }

  double parseNumber() {
    // number = [ "-" ] int [ frac ] [ exp ];  int = "0" / ( digit1-9 *DIGIT )
    const std::size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9') ++pos_;
    } else {
      fail("invalid number");
    }
    if (peek() == '.') {
      ++pos_;
      if (!(peek() >= '0' && peek() <= '9')) fail("invalid number: digit expected after '.'");
      while (peek() >= '0' && peek() <= '9') ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!(peek() >= '0' && peek() <= '9')) fail("invalid number: digit expected in exponent");
      while (peek() >= '0' && peek() <= '9') ++pos_;
    }
    // Convert only the validated span: strtod's own grammar is wider (hex, "inf", "nan") and would
    // read past a JSON number such as the "0" of "0x1".
    char buf[64];
    const std::size_t len = pos_ - start;
    double v;
    if (len < sizeof buf) {
      std::memcpy(buf, s_.data() + start, len);
      buf[len] = '\0';
      v = std::strtod(buf, nullptr);
    } else {
      v = std::strtod(s_.substr(start, len).c_str(), nullptr);
    }
    if (!std::isfinite(v)) failAt(start, "number out of range");
    return v;
  }

  unsigned hex4() {
    if (pos_ + 4 > s_.size()) fail("truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= unsigned(c - 'A' + 10);
      else
        failAt(pos_ - 1, "invalid hex digit in \\u escape");
    }
    return v;
  }

  static void appendUtf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  std::string parseString() {
    ++pos_;  // opening quote
    std::string out;
    for (;;) {
      if (atEnd()) fail("unterminated string");
      const char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) fail("unescaped control character in string");
      if (c != '\\') {
        out += c;
        ++pos_;
        continue;
      }
      ++pos_;
      if (atEnd()) fail("unterminated escape");
      const char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            // High surrogate: must pair with a following \uDC00..\uDFFF.
            if (s_.compare(pos_, 2, "\\u") != 0) fail("unpaired surrogate in \\u escape");
            pos_ += 2;
            const unsigned lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("invalid low surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("unpaired low surrogate in \\u escape");
          }
          appendUtf8(out, cp);
          break;
        }
        default: failAt(pos_ - 1, fmt("invalid escape '\\", e, "'"));
      }
    }
  }

  const std::string& s_;
  const std::string& src_;
  std::size_t pos_ = 0;
};

}  // namespace

Value parse(const std::string& text, const std::string& source) { return Parser(text, source).parseDocument(); }

}  // namespace fedsilo::json
