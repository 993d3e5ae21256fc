#include "data/dataset.hpp"

#include "core/error.hpp"

namespace fedsilo {

namespace {

// One implementation for float and double output. Column j of the (dim x count) column-major output
// is sample idx[j], so each sample is one contiguous run of `dim` values: a straight copy (f32) or a
// scaled widening (u8). Nothing here allocates: gather runs once per minibatch in the training loop.
template <typename T>
void gatherImpl(const Dataset& ds, const Index* idx, int count, T* out) {
  const Index n = ds.size();
  const std::size_t dim = static_cast<std::size_t>(ds.dim());
  if (ds.isU8()) {
    const T scale = static_cast<T>(ds.u8Scale);
    for (int j = 0; j < count; ++j) {
      FEDSILO_ASSERT(idx[j] >= 0 && idx[j] < n, "gather index out of range");
      const std::uint8_t* src = ds.u8.data() + static_cast<std::size_t>(idx[j]) * dim;
      T* dst = out + static_cast<std::size_t>(j) * dim;
      for (std::size_t f = 0; f < dim; ++f) dst[f] = static_cast<T>(src[f]) * scale;
    }
  } else {
    FEDSILO_ASSERT(ds.f32.size() == static_cast<std::size_t>(n) * dim || n == 0, "dataset feature size mismatch");
    for (int j = 0; j < count; ++j) {
      FEDSILO_ASSERT(idx[j] >= 0 && idx[j] < n, "gather index out of range");
      const float* src = ds.f32.data() + static_cast<std::size_t>(idx[j]) * dim;
      T* dst = out + static_cast<std::size_t>(j) * dim;
      for (std::size_t f = 0; f < dim; ++f) dst[f] = static_cast<T>(src[f]);
    }
  }
}

}  // namespace

void Dataset::gather(const Index* idx, int count, float* out) const { gatherImpl(*this, idx, count, out); }

void Dataset::gather(const Index* idx, int count, double* out) const { gatherImpl(*this, idx, count, out); }

std::vector<Index> Dataset::labelCounts(const IndexList& idx) const {
  std::vector<Index> counts(static_cast<std::size_t>(numClasses > 0 ? numClasses : 0), 0);
  for (Index i : idx) {
    FEDSILO_ASSERT(i >= 0 && i < size(), "labelCounts index out of range");
    const std::int32_t y = labels[static_cast<std::size_t>(i)];
    FEDSILO_ASSERT(y >= 0 && y < numClasses, "label ", y, " outside [0, ", numClasses, ")");
    ++counts[static_cast<std::size_t>(y)];
  }
  return counts;
}

}  // namespace fedsilo
