// Software prefetch of a span of floats (internal to the kernels). The dense kernels walk W down its
// rows, 4 to 12 KB apart (one strip of columns at a time), where the hardware prefetchers do not keep
// up; they request the lines of the next tile or strip while computing the current one. Internal
// linkage: each kernel set's translation unit gets its own copy.
#pragma once
#include <cstdint>

namespace fedsilo::kernels {
namespace {

// Requests the cache lines of the n floats from p into every level (Write: with intent to write). The
// span may pass the end of its array: prefetching never faults, and the addresses are integers here.
template <bool Write>
inline void prefetchSpan(const float* p, int n) {
  const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t end = start + sizeof(float) * static_cast<std::uintptr_t>(n);
  for (std::uintptr_t a = start & ~std::uintptr_t(63); a < end; a += 64)
    __builtin_prefetch(reinterpret_cast<const void*>(a), Write ? 1 : 0, 3);
}

}  // namespace
}  // namespace fedsilo::kernels
