#include "app/option_suggestion.hpp"

#include <algorithm>

#include "app/config_file.hpp"

namespace fedsilo {

std::size_t editDistance(const std::string& a, const std::string& b) {
  // Three rows of the dynamic programme: the swap looks two rows back.
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        current[j] = std::min(current[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::optional<std::string> nearestOption(const std::string& name, const std::vector<std::string>& known) {
  const std::size_t limit = std::max<std::size_t>(1, name.size() / 4);
  std::optional<std::string> best;
  std::size_t bestDistance = limit + 1;
  for (const std::string& key : known) {
    const std::size_t d = editDistance(name, key);
    if (d < bestDistance) {
      bestDistance = d;
      best = key;
    }
  }
  if (best || name.find('.') != std::string::npos) return best;
  // A key written without its section (`lr = 0.1` above every [section]).
  std::optional<std::string> sectioned;
  for (const std::string& key : known) {
    const std::size_t dot = key.find('.');
    if (dot == std::string::npos || key.compare(dot + 1, std::string::npos, name) != 0) continue;
    if (sectioned) return std::nullopt;  // in several sections: no one answer
    sectioned = key;
  }
  return sectioned;
}

std::string unrecognisedOption(const std::string& name, const std::vector<std::string>& known) {
  const std::string bare = name.rfind("--", 0) == 0 ? name.substr(2) : name;
  std::string message = "unrecognised option '" + printableExcerpt(bare, 80) + "'";
  if (const std::optional<std::string> near = nearestOption(bare, known)) message += "; did you mean '" + *near + "'?";
  return message;
}

}  // namespace fedsilo
