// Helpers shared by the test executables.
#pragma once
#include <string>

namespace fedsilo::test {

// A fresh, empty temporary directory under $TMPDIR (default /tmp) for small test files, removed with
// everything in it when the test program exits.
std::string tempDir(const std::string& tag);
// Source tree root (FEDSILO_SOURCE_DIR set by ctest; falls back to the compile-time path).
std::string sourceDir();

}  // namespace fedsilo::test
