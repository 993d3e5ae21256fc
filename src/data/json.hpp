// A small, strict JSON (RFC 8259) parser for the LEAF loader. No external library: the container
// image has none, and LEAF files need only the plain data model.
//
// Memory: LEAF FEMNIST stores 784 numbers per sample, so an array whose elements are all numbers is
// kept packed as std::vector<double> (8 bytes per element) instead of one node per number.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace fedsilo::json {

struct Value {
  enum class Type { Null, Bool, Number, String, Array, Object };
  Type type = Type::Null;
  bool boolean = false;
  double number = 0.0;
  std::string string;
  // Array: either `numbers` (every element a number; `packed` true) or `items`.
  bool packed = false;
  std::vector<double> numbers;
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> members;  // Object, in file order
  std::size_t offset = 0;                               // byte offset of the value in its source

  bool isArray() const { return type == Type::Array; }
  std::size_t arraySize() const { return packed ? numbers.size() : items.size(); }
  // Object member by key, nullptr if absent (last one wins for duplicate keys, as in most parsers).
  const Value* find(const std::string& key) const;
};

// Parses `text`; throws DataError "'<source>': malformed JSON at byte <offset>: <what>".
Value parse(const std::string& text, const std::string& source);

const char* typeName(Value::Type t);

}  // namespace fedsilo::json
