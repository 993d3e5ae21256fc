// The environment variables the fedsilo binary reads, as --help lists them. Each is read where it
// acts (nn/kernels.cpp, app/launch_check.cpp, app/fault_injection.cpp); this is the one place that
// says what they mean to a user (tests/integration/test_docs_cli.sh checks that every FEDSILO_*
// variable read in src/ is listed).
#pragma once
#include <string>

namespace fedsilo {

// The "Environment:" part of --help, ending in a newline.
std::string environmentHelp();

}  // namespace fedsilo
