// fedsilo_registry_rounds: the round counts the algorithm registry declares, for scripts
// (tests/integration/test_registry_smoke.sh) that must not read them out of --help.
//   fedsilo_registry_rounds --list                          the registry's algorithm names, one a line
//   fedsilo_registry_rounds --algorithm X [fedsilo options]  the rounds X runs with these options: the
//       given --rounds (default 2) for an iterative algorithm, the count its registry entry declares
//       (AlgorithmEntry::oneShotRounds) for a one-shot one, whatever --rounds says
// Exit 2 with the parser's message on a bad configuration.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "fl/algorithm.hpp"
#include "support/test_support.hpp"

int main(int argc, char** argv) {
  using namespace fedsilo;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && args[0] == "--list") {
    for (const auto& e : algorithmRegistry()) std::printf("%s\n", e.name);
    return 0;
  }
  try {
    int iterativeRounds = 2;
    std::vector<std::string> rest;
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (args[i] == "--rounds" && i + 1 < args.size()) {
        iterativeRounds = std::stoi(args[++i]);
      } else {
        rest.push_back(args[i]);
      }
    }
    std::printf("%d\n", test::parseWithRegistryRounds(rest, iterativeRounds).rounds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fedsilo_registry_rounds: %s\n", e.what());
    return 2;
  }
  return 0;
}
