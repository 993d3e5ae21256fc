// Thread CPU time for the plain benchmark programs: other jobs on a shared machine do not count.
#pragma once
#include <time.h>

namespace fedsilo {

inline double threadSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace fedsilo
