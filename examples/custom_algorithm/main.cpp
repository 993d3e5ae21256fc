// fedsilo with one more algorithm: register it, then run fedsilo's command line.
#include "app/run_main.hpp"
#include "fl/algorithm.hpp"
#include "server_momentum.hpp"

int main(int argc, char** argv) {
  fedsilo::registerAlgorithm({"server_momentum", &makeServerMomentum,
                              "FedAvg with server momentum (FedAvgM, Hsu et al. 2019); an out-of-tree example",
                              &serverMomentumOptions});
  return fedsilo::runMain(argc, argv);
}
