// Heap-allocation counter for tests and benchmarks: "no allocation in the inner training loop" is
// checked, not assumed. Defines malloc, calloc, realloc, free, memalign, aligned_alloc and
// posix_memalign, forwarding to glibc's __libc_* entry points (glibc's documented way to replace
// its allocator); operator new and Eigen's aligned_malloc go through malloc. Counting is off except
// between MallocCounter::start() and stop().
//
// Include it in exactly ONE translation unit of an executable (a test or a benchmark), never in a
// library: the definitions are deliberately not inline, so a second inclusion fails to link.
#pragma once
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
// The system's own declarations must come before the definitions below (a later system declaration
// with a different exception specification would not compile); Eigen includes mm_malloc.h.
#if __has_include(<mm_malloc.h>)
#include <mm_malloc.h>
#endif

namespace fedsilo {

struct MallocCounter {
  static inline std::atomic<bool> counting{false};
  static inline std::atomic<long> mallocs{0};
  static void start() {
    mallocs = 0;
    counting = true;
  }
  static long stop() {
    counting = false;
    return mallocs.load();
  }
  static void count() {
    if (counting.load(std::memory_order_relaxed)) mallocs.fetch_add(1, std::memory_order_relaxed);
  }
};

}  // namespace fedsilo

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);

void* malloc(std::size_t n) {
  fedsilo::MallocCounter::count();
  return __libc_malloc(n);
}
void* calloc(std::size_t n, std::size_t s) {
  fedsilo::MallocCounter::count();
  return __libc_calloc(n, s);
}
void* realloc(void* p, std::size_t n) {
  fedsilo::MallocCounter::count();
  return __libc_realloc(p, n);
}
void free(void* p) { __libc_free(p); }
void* memalign(std::size_t a, std::size_t n) {
  fedsilo::MallocCounter::count();
  return __libc_memalign(a, n);
}
void* aligned_alloc(std::size_t a, std::size_t n) { return memalign(a, n); }
int posix_memalign(void** out, std::size_t a, std::size_t n) {
  void* p = memalign(a, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
}
