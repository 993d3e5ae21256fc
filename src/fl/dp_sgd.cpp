#include "fl/dp_sgd.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "fl/local_trainer.hpp"
#include "privacy/gaussian_f32.hpp"

namespace fedsilo {

void poissonBatch(const IndexList& indices, double q, const PrivateSgd& p, IndexList& out) {
  out.clear();
  const std::size_t n = indices.size();
  if (q >= 1.0) {
    out.assign(indices.begin(), indices.end());
    return;
  }
  if (!(q > 0.0)) return;
  Rng rng(p.seed, p.client, p.round, Purpose::DpBatch, static_cast<std::uint64_t>(p.steps));
  // The gap to the next selected record is geometric: P(gap = g) = (1 - q)^g q.
  const double logKeep = std::log1p(-q);
  for (std::size_t i = 0;; ++i) {
    const double gap = std::floor(std::log(1.0 - rng.uniform()) / logKeep);  // 1 - U in (0, 1]
    if (!(gap < static_cast<double>(n - i))) return;
    i += static_cast<std::size_t>(gap);
    out.push_back(indices[i]);
  }
}

Rng privateSgdNoiseRng(const PrivateSgd& p) {
  return Rng(p.seed, p.client, p.round, Purpose::DpSgdNoise, static_cast<std::uint64_t>(p.steps));
}

// The sample is processed in chunks of at most the reserved batch (a Poisson batch can exceed the
// configured one); the clipped sums of the chunks add up, because each sample is clipped on its own.
double LocalTrainer::privateGradient(Model& model, const IndexList& indices, const TrainOptions& opt) {
  PrivateSgd& p = *private_;
  const std::size_t n = indices.size(), P = static_cast<std::size_t>(model.numParams());
  const double q = std::min(1.0, static_cast<double>(opt.batch) / static_cast<double>(n));
  poissonBatch(indices, q, p, privateBatch_);
  const int cap = std::min(maxBatch_, model.maxBatch());
  const std::size_t m = privateBatch_.size();
  double lossSum = 0.0;
  float* g = model.grads();
  if (m == 0) std::fill(g, g + P, 0.0f);
  for (std::size_t off = 0; off < m; off += static_cast<std::size_t>(cap)) {
    const int cnt = static_cast<int>(std::min<std::size_t>(cap, m - off));
    const float* x = gatherBatch(train_, privateBatch_.data() + off, cnt);
    const std::int32_t* y = gatherLabels(train_, privateBatch_.data() + off, cnt);
    lossSum += model.lossAndClippedGradient(x, y, cnt, p.clip) * cnt;
    if (m <= static_cast<std::size_t>(cap)) break;
    if (off == 0) privateSum_.assign(P, 0.0f);
    for (std::size_t i = 0; i < P; ++i) privateSum_[i] += g[i];
  }
  if (m > static_cast<std::size_t>(cap)) std::copy(privateSum_.begin(), privateSum_.end(), g);
  Rng noise = privateSgdNoiseRng(p);
  const float inv = static_cast<float>(1.0 / (q * static_cast<double>(n)));  // the expected batch size
  // Float noise for the float gradient (privacy/gaussian_f32.hpp); g = (g + noise) * inv in one pass.
  addScaledNormalsF32(g, P, static_cast<float>(p.noiseMultiplier * p.clip), noise, inv);
  if (p.accountant) p.accountant->compose(q, p.noiseMultiplier);
  ++p.steps;
  return m > 0 ? lossSum / static_cast<double>(m) : 0.0;
}

}  // namespace fedsilo
