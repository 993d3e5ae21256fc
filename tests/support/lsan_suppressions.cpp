// LeakSanitizer suppressions for FEDSILO_SANITIZE=address builds, compiled into every test program
// (an INTERFACE source of fedsilo_test_support), so that they hold wherever a test program runs: under
// ctest, and when CMake runs it at build time to list its tests. Each entry is a library we call that
// allocates memory once and keeps it until the process exits (its own caches, thread-local state,
// start-up strings), which LeakSanitizer reports at exit as "leaked". fedsilo's own code has no entry
// here: a leak in src/ or tests/ still fails the test.
extern "C" const char* __lsan_default_suppressions();  // NOLINT(bugprone-reserved-identifier): LSan's hook

extern "C" const char* __lsan_default_suppressions() {  // NOLINT(bugprone-reserved-identifier)
  return "leak:libgfortran.so\n"  // OpenBLAS's Fortran runtime: environment strings read at start-up
         "leak:libopenblas\n"
         "leak:libmpi.so\n"  // Open MPI and the libraries it loads: state kept until exit
         "leak:libopen-pal.so\n"
         "leak:libopen-rte.so\n"
         "leak:libpmix.so\n"
         "leak:libhwloc.so\n"
         "leak:libevent\n"
         "leak:mca_\n"  // Open MPI's components (mca_*.so)
         "leak:libhdf5\n";
}
