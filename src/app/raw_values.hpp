// The option values as text (defaults filled in), read by typed, range-checked getters whose errors
// name the option, the value and what was expected.
#pragma once
#include <cmath>
#include <map>
#include <string>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace fedsilo {

// Holds a reference to `values`, which must outlive it.
class RawValues {
 public:
  explicit RawValues(const std::map<std::string, std::string>& values) : values_(values) {}
  const std::string& text(const std::string& key) const { return values_.at(key); }
  std::string trimmed(const std::string& key) const { return trim(text(key)); }

  long long integer(const std::string& key, long long lo, long long hi) const {
    const long long x = parseInt(text(key), key);
    if (x < lo || x > hi)
      throw ConfigError(fmt(key, " = ", text(key), ": expected an integer in [", lo, ", ", hi, "]"));
    return x;
  }
  int smallInteger(const std::string& key, long long lo, long long hi) const {
    return static_cast<int>(integer(key, lo, hi));
  }
  double number(const std::string& key, double lo, double hi, bool openLo = false, bool openHi = false) const {
    const double x = parseDouble(text(key), key);
    const bool ok = std::isfinite(x) && (openLo ? x > lo : x >= lo) && (openHi ? x < hi : x <= hi);
    if (!ok)
      throw ConfigError(fmt(key, " = ", text(key), ": expected a number in ", openLo ? "(" : "[", lo, ", ", hi,
                            openHi ? ")" : "]"));
    return x;
  }
  bool boolean(const std::string& key) const { return parseBool(key, text(key)); }
  template <typename E>
  E choice(const std::string& key) const {
    return parseEnum<E>(key, text(key));
  }

 private:
  const std::map<std::string, std::string>& values_;
};

}  // namespace fedsilo
