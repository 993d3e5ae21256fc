// SHA-256 (FIPS 180-4), for checking that a shipped data file is the one its documentation names.
// Not for speed: the files it checks are a few kilobytes.
#pragma once
#include <string>

namespace fedsilo {

// The digest of `bytes` as 64 lowercase hexadecimal digits.
std::string sha256Hex(const std::string& bytes);

}  // namespace fedsilo
