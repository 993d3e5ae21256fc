#include "core/strings.hpp"

#include <cerrno>
#include <cstdlib>

#include "core/error.hpp"

namespace fedsilo {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> splitList(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : s) {
    if (ch == sep) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!trim(cur).empty() || !out.empty()) out.push_back(trim(cur));
  return out;
}

double parseDouble(const std::string& text, const std::string& what) {
  const std::string t = trim(text);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || errno == ERANGE)
    throw ConfigError(fmt(what, ": '", text, "' is not a number"));
  return v;
}

long long parseInt(const std::string& text, const std::string& what) {
  const std::string t = trim(text);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(t.c_str(), &end, 10);
  if (t.empty() || end != t.c_str() + t.size() || errno == ERANGE)
    throw ConfigError(fmt(what, ": '", text, "' is not an integer"));
  return v;
}

std::vector<double> parseDoubleList(const std::string& text, const std::string& what) {
  std::vector<double> out;
  for (const auto& p : splitList(text)) out.push_back(parseDouble(p, what));
  return out;
}

std::vector<int> parseIntList(const std::string& text, const std::string& what) {
  std::vector<int> out;
  for (const auto& p : splitList(text)) {
    const long long v = parseInt(p, what);
    if (v < -2147483647LL || v > 2147483647LL) throw ConfigError(fmt(what, ": '", p, "' is out of range"));
    out.push_back(static_cast<int>(v));
  }
  return out;
}

}  // namespace fedsilo
