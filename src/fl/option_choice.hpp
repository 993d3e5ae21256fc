// Enumerated algorithm options (gems.init = shared | independent, ...): one table per enumeration
// pairs each accepted word with its enum value, and both the check and the conversion read it, so
// the option is turned into its enum once, when the algorithm's options are parsed.
#pragma once
#include <cstddef>
#include <string>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace fedsilo {

template <typename E>
struct Choice {
  const char* word;
  E value;
};

// The value of option `key` (trimmed) among `choices`; ConfigError "key = value: expected one of a, b"
// otherwise.
template <typename E, std::size_t N>
E parseChoice(const OptionValues& o, const std::string& key, const Choice<E> (&choices)[N]) {
  const std::string word = trim(o.getString(key));
  for (const Choice<E>& c : choices)
    if (word == c.word) return c.value;
  std::string list;
  for (const Choice<E>& c : choices) list += (list.empty() ? "" : ", ") + std::string(c.word);
  throw ConfigError(fmt(key, " = ", o.getString(key), ": expected one of ", list));
}

// The word of `value` in `choices` (what the option would be set to).
template <typename E, std::size_t N>
const char* choiceWord(E value, const Choice<E> (&choices)[N]) {
  for (const Choice<E>& c : choices)
    if (c.value == value) return c.word;
  return "?";
}

}  // namespace fedsilo
