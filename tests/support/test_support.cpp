#include "support/test_support.hpp"

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <random>
#include <string>
#include <system_error>
#include <unistd.h>
#include <vector>

#include "app/config_parser.hpp"
#include "fl/algorithm.hpp"

namespace fedsilo::test {
namespace {

// The directories tempDir() made in this process, removed when the process exits normally (after
// main() returns, so after MPI_Finalize in the MPI tests: no rank still reads them). A test that
// crashes leaves its directory for the post-mortem.
class TempDirs {
 public:
  ~TempDirs() {
    std::error_code ignored;
    for (const auto& d : dirs_) std::filesystem::remove_all(d, ignored);
  }
  void add(const std::filesystem::path& p) {
    const std::lock_guard<std::mutex> lock(mutex_);
    dirs_.push_back(p);
  }

 private:
  std::mutex mutex_;
  std::vector<std::filesystem::path> dirs_;
};

TempDirs& tempDirs() {
  static TempDirs dirs;
  return dirs;
}

}  // namespace

std::string tempDir(const std::string& tag) {
  namespace fs = std::filesystem;
  const char* base = std::getenv("TMPDIR");
  fs::path root = base ? base : "/tmp";
  std::random_device rd;
  fs::path p = root / ("fedsilo_test_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(rd()));
  fs::create_directories(p);
  tempDirs().add(p);
  return p.string();
}

std::string sourceDir() {
  const char* s = std::getenv("FEDSILO_SOURCE_DIR");
  return s ? s : FEDSILO_TEST_SOURCE_DIR;
}

ExperimentConfig parseWithRegistryRounds(std::vector<std::string> args, int iterativeRounds) {
  std::string name;
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--algorithm") name = args[i + 1];
  const AlgorithmEntry* entry = findAlgorithm(name);
  int rounds = iterativeRounds;
  if (entry != nullptr && entry->oneShotRounds) {
    // The parser asks the algorithm's factory, which refuses any but its own count; so read the
    // count from a configuration that differs only in naming an iterative algorithm (the one-shot
    // options are parsed whatever the algorithm).
    std::vector<std::string> probe = args;
    for (std::size_t i = 0; i + 1 < probe.size(); ++i)
      if (probe[i] == "--algorithm") probe[i + 1] = "fedavg";
    probe.insert(probe.end(), {"--rounds", "1"});
    rounds = entry->oneShotRounds(parseArguments(probe).config);
  }
  args.insert(args.end(), {"--rounds", std::to_string(rounds)});
  return parseArguments(args).config;
}

}  // namespace fedsilo::test
