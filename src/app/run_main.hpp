// fedsilo's command line as a library call. The `fedsilo` executable's main() is runMain; a program
// with algorithms of its own registers them (fl/algorithm.hpp: registerAlgorithm) and then calls it:
//
//   int main(int argc, char** argv) {
//     fedsilo::registerAlgorithm({"my_algorithm", &makeMyAlgorithm, "what it does", &myOptions});
//     return fedsilo::runMain(argc, argv);
//   }
//
// (examples/custom_algorithm, docs/extending.md).
#pragma once

namespace fedsilo {

// Runs `fedsilo [options]` or `fedsilo epsilon ...` exactly as the fedsilo executable does, and returns
// the process exit code: 0 success, 2 bad command line or configuration, 3 bad or missing input data,
// 1 other errors, 75 interrupted after writing a checkpoint. It starts and finalises MPI itself: call it
// once, from main, after every registerAlgorithm.
int runMain(int argc, char** argv);

}  // namespace fedsilo
