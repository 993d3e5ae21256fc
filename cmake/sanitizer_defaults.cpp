// Run-time defaults of FEDSILO_SANITIZE=address builds, compiled into fedsilo and every test program.
//
// Leak detection is off: Open MPI loads its components with dlopen and unloads them in MPI_Finalize,
// so the memory they keep until exit is reported as leaked from "<unknown module>" frames that no
// suppression can name (every program here initialises MPI, the unit tests through a single-rank
// communicator). AddressSanitizer's checks of every access (overflows, use after free, double free)
// and UndefinedBehaviorSanitizer stay on, and a report still ends the program with an error.
// allocator_may_return_null: an allocation too large for memory throws std::bad_alloc as it does
// without the sanitizer, so fedsilo's out-of-memory message (core/memory.hpp) is what is tested.
extern "C" const char* __asan_default_options();  // NOLINT(bugprone-reserved-identifier): ASan's hook

extern "C" const char* __asan_default_options() {  // NOLINT(bugprone-reserved-identifier)
  return "detect_leaks=0:allocator_may_return_null=1";
}
