#include "fl/version_sums.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace fedsilo {

std::size_t VersionSums::maxVersions() const {
  return std::max<std::size_t>(1, kBatchBytes / (std::max<std::size_t>(n_, 1) * sizeof(Fixed128)));
}

void VersionSums::start(int first, int count) {
  FEDSILO_ASSERT(count >= 1 && static_cast<std::size_t>(count) <= maxVersions(), "version batch of ", count,
                 " versions");
  first_ = first;
  count_ = count;
  acc_.resize(static_cast<std::size_t>(count) * n_);
}

std::size_t VersionSums::offset(int version) const {
  FEDSILO_ASSERT(holds(version), "version ", version, " is not in the batch [", first_, ", ", first_ + count_, ")");
  return static_cast<std::size_t>(version - first_) * n_;
}

void VersionSums::add(int version, const float* x, double w) { acc_.addScaled(offset(version), x, n_, w); }

void VersionSums::values(int version, std::vector<double>& out) const {
  const std::size_t at = offset(version);
  out.resize(n_);
  for (std::size_t i = 0; i < n_; ++i) out[i] = acc_.value(at + i);
}

}  // namespace fedsilo
