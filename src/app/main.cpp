// The fedsilo executable: the command line of app/run_main, with the built-in algorithms.
#include "app/run_main.hpp"

int main(int argc, char** argv) { return fedsilo::runMain(argc, argv); }
