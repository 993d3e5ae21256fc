#include "core/config.hpp"

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fedsilo {

const std::string& OptionValues::raw(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) throw ConfigError(fmt("option ", key, " is not set"));
  return it->second;
}

double OptionValues::getDouble(const std::string& key, double min, double max) const {
  const double v = parseDouble(raw(key), key);
  if (!(v >= min && v <= max)) throw ConfigError(fmt(key, " = ", raw(key), ": expected a value in [", min, ", ", max, "]"));
  return v;
}

long long OptionValues::getInt(const std::string& key, long long min, long long max) const {
  const long long v = parseInt(raw(key), key);
  if (v < min || v > max) throw ConfigError(fmt(key, " = ", raw(key), ": expected an integer in [", min, ", ", max, "]"));
  return v;
}

bool OptionValues::getBool(const std::string& key) const {
  const std::string v = trim(raw(key));
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  throw ConfigError(fmt(key, " = ", raw(key), ": expected true or false"));
}

std::vector<int> OptionValues::getIntList(const std::string& key, int min, int max) const {
  if (trim(raw(key)).empty()) return {};
  std::vector<int> out = parseIntList(raw(key), key);
  for (int v : out)
    if (v < min || v > max) throw ConfigError(fmt(key, " = ", raw(key), ": each value must be in [", min, ", ", max, "]"));
  return out;
}

}  // namespace fedsilo
