#include "support/test_support.hpp"

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <unistd.h>

namespace fedsilo::test {

std::string tempDir(const std::string& tag) {
  namespace fs = std::filesystem;
  const char* base = std::getenv("TMPDIR");
  fs::path root = base ? base : "/tmp";
  std::random_device rd;
  fs::path p = root / ("fedsilo_test_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(rd()));
  fs::create_directories(p);
  return p.string();
}

std::string sourceDir() {
  const char* s = std::getenv("FEDSILO_SOURCE_DIR");
  return s ? s : FEDSILO_TEST_SOURCE_DIR;
}

}  // namespace fedsilo::test
