#include "data/dataset.hpp"

#include <cmath>
#include <type_traits>

#include "core/error.hpp"

namespace fedsilo {

namespace {

// One implementation for float and double output. Column j of the (dim x count) column-major output
// is sample idx[j], so each sample is one contiguous run of `dim` values: a straight copy (f32) or a
// scaled widening (u8). Nothing here allocates: gather runs once per minibatch in the training loop.
// The normalized path: (x - mean_c) / std_c per channel, for u8 through the per-channel byte table
// (float output) or the same arithmetic (double output).
template <typename T>
void gatherNormalized(const Dataset& ds, const Index* idx, int count, T* out, const std::vector<float>& u8Table) {
  const std::size_t dim = static_cast<std::size_t>(ds.dim());
  const std::size_t plane = static_cast<std::size_t>(ds.shape.h) * static_cast<std::size_t>(ds.shape.w);
  const std::size_t channels = ds.channelMean.size();
  for (int j = 0; j < count; ++j) {
    FEDSILO_ASSERT(idx[j] >= 0 && idx[j] < ds.size(), "gather index out of range");
    const std::size_t at = static_cast<std::size_t>(idx[j]) * dim;
    T* dst = out + static_cast<std::size_t>(j) * dim;
    for (std::size_t c = 0; c < channels; ++c) {
      const std::size_t f0 = c * plane;
      if (ds.isU8() && std::is_same_v<T, float>) {
        const float* table = u8Table.data() + c * 256;
        for (std::size_t f = f0; f < f0 + plane; ++f) dst[f] = static_cast<T>(table[ds.u8[at + f]]);
        continue;
      }
      const T mean = static_cast<T>(ds.channelMean[c]), sd = static_cast<T>(ds.channelStd[c]);
      for (std::size_t f = f0; f < f0 + plane; ++f) {
        const T raw = ds.isU8() ? static_cast<T>(ds.u8[at + f]) * static_cast<T>(ds.u8Scale)
                                : static_cast<T>(ds.f32[at + f]);
        dst[f] = (raw - mean) / sd;
      }
    }
  }
}

// A batch's samples lie scattered over the dataset (a shuffled client's indices into tens of MB for
// an image set), so every sample starts with cache misses, and converting one sample at a time
// waited for memory most of the time. The lines of the sample kPrefetchAhead places ahead are
// requested before the current one is converted: a whole W1 batch is in flight at once. perf of 1-rank
// W1 runs: the gather fell from 7.6% of the run's samples to 4.9% (4 ahead), 3.7% (16), 2.3% (32).
constexpr int kPrefetchAhead = 32;

// The features of sample idx[j] as bytes, or nullptr when j >= count or the index is out of range.
template <typename E>
const char* sampleBytes(const std::vector<E>& features, const Index* idx, int j, int count, std::size_t dim) {
  if (j >= count || dim == 0 || idx[j] < 0 || static_cast<std::size_t>(idx[j]) >= features.size() / dim) return nullptr;
  return reinterpret_cast<const char*>(features.data() + static_cast<std::size_t>(idx[j]) * dim);
}

// Requests the cache lines of one sample's `bytes` bytes of features; Locality as __builtin_prefetch's
// (3: every cache level, 2: L2 and beyond).
template <int Locality>
inline void prefetchSample(const char* sample, std::size_t bytes) {
  for (std::size_t off = 0; off < bytes; off += 64) __builtin_prefetch(sample + off, 0, Locality);
}

template <typename T>
void gatherImpl(const Dataset& ds, const Index* idx, int count, T* out, const std::vector<float>& u8Table) {
  if (ds.normalized()) return gatherNormalized(ds, idx, count, out, u8Table);
  const Index n = ds.size();
  const std::size_t dim = static_cast<std::size_t>(ds.dim());
  if (ds.isU8()) {
    const T scale = static_cast<T>(ds.u8Scale);
    for (int j = -kPrefetchAhead; j < count; ++j) {
      if (const char* ahead = sampleBytes(ds.u8, idx, j + kPrefetchAhead, count, dim)) prefetchSample<3>(ahead, dim);
      if (j < 0) continue;
      FEDSILO_ASSERT(idx[j] >= 0 && idx[j] < n, "gather index out of range");
      const std::uint8_t* src = ds.u8.data() + static_cast<std::size_t>(idx[j]) * dim;
      T* dst = out + static_cast<std::size_t>(j) * dim;
      for (std::size_t f = 0; f < dim; ++f) dst[f] = static_cast<T>(src[f]) * scale;
    }
  } else {
    FEDSILO_ASSERT(ds.f32.size() == static_cast<std::size_t>(n) * dim || n == 0, "dataset feature size mismatch");
    for (int j = -kPrefetchAhead; j < count; ++j) {
      if (const char* ahead = sampleBytes(ds.f32, idx, j + kPrefetchAhead, count, dim))
        prefetchSample<3>(ahead, dim * sizeof(float));
      if (j < 0) continue;
      FEDSILO_ASSERT(idx[j] >= 0 && idx[j] < n, "gather index out of range");
      const float* src = ds.f32.data() + static_cast<std::size_t>(idx[j]) * dim;
      T* dst = out + static_cast<std::size_t>(j) * dim;
      for (std::size_t f = 0; f < dim; ++f) dst[f] = static_cast<T>(src[f]);
    }
  }
}

}  // namespace

void Dataset::gather(const Index* idx, int count, float* out) const { gatherImpl(*this, idx, count, out, u8Table_); }

// Into L2 (locality 2): a W1 batch is 32 x 784 bytes, and the step in between evicts L1 anyway.
void Dataset::prefetch(const Index* idx, int count) const {
  const std::size_t dim = static_cast<std::size_t>(this->dim());
  const std::size_t bytes = dim * (isU8() ? sizeof(std::uint8_t) : sizeof(float));
  for (int j = 0; j < count; ++j) {
    const char* sample = isU8() ? sampleBytes(u8, idx, j, count, dim) : sampleBytes(f32, idx, j, count, dim);
    if (sample) prefetchSample<2>(sample, bytes);
  }
}

void Dataset::gather(const Index* idx, int count, double* out) const {
  gatherImpl(*this, idx, count, out, u8Table_);
}

void Dataset::setNormalization(const std::vector<double>& mean, const std::vector<double>& std) {
  const std::size_t plane = static_cast<std::size_t>(shape.h) * static_cast<std::size_t>(shape.w);
  FEDSILO_ASSERT(mean.size() == std.size() && mean.size() * plane == static_cast<std::size_t>(dim()),
                 "normalization needs one mean and std per channel");
  channelMean.assign(mean.begin(), mean.end());
  channelStd.assign(std.begin(), std.end());
  for (float s : channelStd) FEDSILO_ASSERT(s > 0.0f && std::isfinite(s), "normalization std ", s);
  u8Table_.assign(mean.size() * 256, 0.0f);
  // (v * u8Scale - mean) / std in float, as the arithmetic path computes it for f32 data.
  for (std::size_t c = 0; c < mean.size(); ++c)
    for (int v = 0; v < 256; ++v)
      u8Table_[c * 256 + static_cast<std::size_t>(v)] =
          (static_cast<float>(v) * u8Scale - channelMean[c]) / channelStd[c];
}

float Dataset::zeroValue(int channel) const {
  if (!normalized()) return 0.0f;
  return (0.0f - channelMean[static_cast<std::size_t>(channel)]) / channelStd[static_cast<std::size_t>(channel)];
}

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
