// What topk and randk share: how many elements of a block they keep.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>

namespace fedsilo {

// k = round(ratio · m), at least 1 of a non-empty block and at most m (ratio 1 keeps all).
inline std::size_t keptCount(std::size_t m, double ratio) {
  if (m == 0) return 0;
  const auto k = static_cast<std::size_t>(std::llround(ratio * static_cast<double>(m)));
  return std::clamp<std::size_t>(k, 1, m);
}

}  // namespace fedsilo
