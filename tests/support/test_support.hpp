// Helpers shared by the test executables.
#pragma once
#include <string>

namespace fedsilo::test {

// A fresh, empty temporary directory (removed by the OS tmp cleaner; tests write small files here).
std::string tempDir(const std::string& tag);
// Source tree root (FEDSILO_SOURCE_DIR set by ctest; falls back to the compile-time path).
std::string sourceDir();

}  // namespace fedsilo::test
