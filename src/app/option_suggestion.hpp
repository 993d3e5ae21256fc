// "Did you mean" for a mistyped option name, on the command line and in INI files.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace fedsilo {

// The optimal-string-alignment distance (Damerau-Levenshtein without repeated edits of one
// substring): insertions, deletions, substitutions and swaps of two neighbouring characters count 1.
std::size_t editDistance(const std::string& a, const std::string& b);

// The known option nearest to `name`: the closest by editDistance if it is within max(1, length/4) of
// `name`'s length (the first in `known`'s order on a tie); else the only known `section.name` when
// `name` has no section (`lr` for `train.lr`); else none.
std::optional<std::string> nearestOption(const std::string& name, const std::vector<std::string>& known);

// "unrecognised option 'NAME'" with "; did you mean 'X'?" when nearestOption finds one. `name` is
// shown as given (cut and made printable), without the command line's leading "--".
std::string unrecognisedOption(const std::string& name, const std::vector<std::string>& known);

}  // namespace fedsilo
