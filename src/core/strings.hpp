// Small string helpers used by config parsing and loaders.
#pragma once
#include <string>
#include <vector>

namespace fedsilo {

std::string trim(const std::string& s);
std::vector<std::string> splitList(const std::string& s, char sep = ',');
// Parse helpers throw ConfigError naming `what` and the bad text.
double parseDouble(const std::string& text, const std::string& what);
long long parseInt(const std::string& text, const std::string& what);
std::vector<double> parseDoubleList(const std::string& text, const std::string& what);
std::vector<int> parseIntList(const std::string& text, const std::string& what);

}  // namespace fedsilo
