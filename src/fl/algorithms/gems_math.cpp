#include "fl/algorithms/gems_math.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.hpp"

namespace fedsilo {

void sampleSurface(const std::vector<double>& center, double radius, const SurfaceGeometry& geom, Rng& rng,
                   std::vector<double>& point) {
  const std::size_t d = center.size();
  FEDSILO_ASSERT(geom.axes.empty() || geom.axes.size() == d, "axes of size ", geom.axes.size(), " for d = ", d);
  FEDSILO_ASSERT(geom.mask.empty() || geom.mask.size() == d, "mask of size ", geom.mask.size(), " for d = ", d);
  point.assign(d, 0.0);
  double norm2 = 0.0;
  // Redraw in the (probability-zero) case of an all-zero direction.
  while (norm2 == 0.0) {
    for (std::size_t i = 0; i < d; ++i) {
      if (!geom.mask.empty() && !geom.mask[i]) continue;
      const double z = rng.normal();
      point[i] = z;
      norm2 += z * z;
    }
    if (d == 0) return;
  }
  const double s = radius / std::sqrt(norm2);
  for (std::size_t i = 0; i < d; ++i) {
    const double a = geom.axes.empty() ? 1.0 : geom.axes[i];
    point[i] = center[i] + s * a * point[i];
  }
}

RadiusSearchResult searchRadius(const std::vector<double>& center, const RadiusSearchOptions& opt,
                                const SurfaceGeometry& geom, Rng& rng,
                                const std::function<bool(const std::vector<double>& point)>& passes) {
  FEDSILO_ASSERT(opt.samples >= 1 && opt.tol > 0.0 && opt.rMax >= 0.0);
  RadiusSearchResult res;
  res.evaluations = 1;
  res.centerPasses = passes(center);
  if (!res.centerPasses) return res;
  double lo = 0.0, hi = opt.rMax;
  std::vector<double> point;
  while (hi - lo > opt.tol) {
    const double r = 0.5 * (lo + hi);
    bool all = true;
    for (int s = 0; s < opt.samples && all; ++s) {
      sampleSurface(center, r, geom, rng, point);
      ++res.evaluations;
      all = passes(point);  // early exit at the first failure
    }
    ++res.bisections;
    (all ? lo : hi) = r;
  }
  res.radius = lo;
  return res;
}

namespace {

// Scale of coordinate i of set k: a_ki * r_k (ellipsoids); r_k = 0 is kept away from zero so that a
// degenerate ellipsoid is a very thin one rather than a division by zero.
inline double axisScale(const BallSet& b, int k, int i) {
  return b.axes[static_cast<std::size_t>(k) * b.d + i] * std::max(b.radii[k], 1e-12);
}

// Term k of eq (2) at w, and (if grad != nullptr and the term is positive) adds its gradient.
double termAndGradient(const BallSet& b, int k, const std::vector<double>& w, double* grad) {
  const double* c = b.centers.data() + static_cast<std::size_t>(k) * b.d;
  if (b.axes.empty()) {
    double s = 0.0;
    for (int i = 0; i < b.d; ++i) s += (w[i] - c[i]) * (w[i] - c[i]);
    const double dist = std::sqrt(s);
    const double t = dist - b.radii[k];
    if (!(t > 0.0)) return 0.0;
    if (grad)
      for (int i = 0; i < b.d; ++i) grad[i] += (w[i] - c[i]) / dist;
    return t;
  }
  double s = 0.0;
  for (int i = 0; i < b.d; ++i) {
    const double q = (w[i] - c[i]) / axisScale(b, k, i);
    s += q * q;
  }
  const double m = std::sqrt(s);
  const double t = m - 1.0;
  if (!(t > 0.0)) return 0.0;
  if (grad)
    for (int i = 0; i < b.d; ++i) {
      const double a = axisScale(b, k, i);
      grad[i] += (w[i] - c[i]) / (a * a * m);
    }
  return t;
}

void checkBalls(const BallSet& b) {
  FEDSILO_ASSERT(b.d >= 0 && b.centers.size() == b.radii.size() * static_cast<std::size_t>(b.d),
                 "ball set: ", b.centers.size(), " centre values for ", b.radii.size(), " balls of dimension ", b.d);
  FEDSILO_ASSERT(b.axes.empty() || b.axes.size() == b.centers.size());
}

}  // namespace

double intersectionObjective(const BallSet& balls, const std::vector<double>& w) {
  checkBalls(balls);
  double f = 0.0;
  for (int k = 0; k < balls.size(); ++k) f += termAndGradient(balls, k, w, nullptr);
  return f;
}

IntersectResult intersectBalls(const BallSet& balls, const IntersectOptions& opt) {
  checkBalls(balls);
  const int K = balls.size(), d = balls.d;
  FEDSILO_ASSERT(K >= 1);
  IntersectResult res;
  std::vector<double> w(d, 0.0), g(d);
  for (int k = 0; k < K; ++k)
    for (int i = 0; i < d; ++i) w[i] += balls.centers[static_cast<std::size_t>(k) * d + i];
  for (int i = 0; i < d; ++i) w[i] /= K;
  auto objective = [&](std::vector<double>* gradOut) {
    double f = 0.0;
    if (gradOut) std::fill(gradOut->begin(), gradOut->end(), 0.0);
    for (int k = 0; k < K; ++k) f += termAndGradient(balls, k, w, gradOut ? gradOut->data() : nullptr);
    return f;
  };
  double f = objective(&g);
  res.w = w;
  res.objective = f;
  for (int t = 0; t < opt.steps && f > 0.0; ++t) {
    for (int i = 0; i < d; ++i) w[i] -= opt.lr * g[i];
    f = objective(&g);
    res.steps = t + 1;
    if (f < res.objective) {
      res.objective = f;
      res.w = w;
    }
  }
  res.found = res.objective == 0.0;
  return res;
}

bool spheresIntersect(const double* ca, double ra, const double* cb, double rb, int d) {
  double s = 0.0;
  for (int i = 0; i < d; ++i) s += (ca[i] - cb[i]) * (ca[i] - cb[i]);
  return std::sqrt(s) <= ra + rb;
}

std::vector<double> fisherAxes(const std::vector<double>& fisher) {
  std::vector<double> a(fisher.size());
  double mx = 0.0;
  for (std::size_t i = 0; i < fisher.size(); ++i) {
    a[i] = 1.0 / (std::fabs(fisher[i]) + 1e-5);
    mx = std::max(mx, a[i]);
  }
  for (double& v : a) v = std::max(0.1, v / mx);
  return a;
}

std::vector<char> fisherMask(const std::vector<double>& fisher, double prop) {
  if (prop >= 1.0 || fisher.empty()) return {};
  const std::size_t n = fisher.size();
  const std::size_t keep =
      std::max<std::size_t>(1, static_cast<std::size_t>(std::floor(prop * static_cast<double>(n))));
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return fisher[a] > fisher[b]; });
  std::vector<char> mask(n, 0);
  for (std::size_t j = 0; j < keep; ++j) mask[order[j]] = 1;
  return mask;
}

std::vector<int> kMeans(const std::vector<double>& points, int n, int dim, int k, Rng& rng, int maxIter) {
  FEDSILO_ASSERT(n >= 0 && dim >= 1 && k >= 1 && points.size() == static_cast<std::size_t>(n) * dim);
  std::vector<int> assign(static_cast<std::size_t>(n), 0);
  if (n == 0) return assign;
  if (k >= n) {
    std::iota(assign.begin(), assign.end(), 0);
    return assign;
  }
  auto pt = [&](int i) { return points.data() + static_cast<std::size_t>(i) * dim; };
  auto dist2 = [&](const double* a, const double* b) {
    double s = 0.0;
    for (int j = 0; j < dim; ++j) s += (a[j] - b[j]) * (a[j] - b[j]);
    return s;
  };
  // k-means++ seeding: the first centre uniformly, each next one with probability proportional to
  // the squared distance to the nearest centre chosen so far.
  std::vector<double> cent(static_cast<std::size_t>(k) * dim);
  std::vector<double> d2(static_cast<std::size_t>(n), std::numeric_limits<double>::infinity());
  int first = static_cast<int>(rng.below(static_cast<std::uint64_t>(n)));
  std::copy(pt(first), pt(first) + dim, cent.begin());
  for (int c = 1; c < k; ++c) {
    double total = 0.0;
    for (int i = 0; i < n; ++i) {
      d2[i] = std::min(d2[i], dist2(pt(i), cent.data() + static_cast<std::size_t>(c - 1) * dim));
      total += d2[i];
    }
    int pick = n - 1;
    if (total > 0.0) {
      const double u = rng.uniform() * total;
      double acc = 0.0;
      for (int i = 0; i < n; ++i) {
        acc += d2[i];
        if (u < acc && d2[i] > 0.0) {
          pick = i;
          break;
        }
      }
    } else {
      pick = static_cast<int>(rng.below(static_cast<std::uint64_t>(n)));
    }
    std::copy(pt(pick), pt(pick) + dim, cent.begin() + static_cast<std::ptrdiff_t>(c) * dim);
  }
  // Lloyd iterations.
  std::vector<double> sum(static_cast<std::size_t>(k) * dim);
  std::vector<int> count(static_cast<std::size_t>(k));
  for (int it = 0; it < maxIter; ++it) {
    bool changed = it == 0;
    for (int i = 0; i < n; ++i) {
      int best = 0;
      double bd = std::numeric_limits<double>::infinity();
      for (int c = 0; c < k; ++c) {
        const double v = dist2(pt(i), cent.data() + static_cast<std::size_t>(c) * dim);
        if (v < bd) {
          bd = v;
          best = c;
        }
      }
      if (assign[i] != best) changed = true;
      assign[i] = best;
    }
    if (!changed) break;
    std::fill(sum.begin(), sum.end(), 0.0);
    std::fill(count.begin(), count.end(), 0);
    for (int i = 0; i < n; ++i) {
      ++count[assign[i]];
      for (int j = 0; j < dim; ++j) sum[static_cast<std::size_t>(assign[i]) * dim + j] += pt(i)[j];
    }
    for (int c = 0; c < k; ++c)
      if (count[c] > 0)
        for (int j = 0; j < dim; ++j)
          cent[static_cast<std::size_t>(c) * dim + j] = sum[static_cast<std::size_t>(c) * dim + j] / count[c];
  }
  return assign;
}

NeuronMergeResult mergeNeurons(const BallSet& neurons, const std::vector<int>& clusterOf, int k,
                               const IntersectOptions& opt) {
  checkBalls(neurons);
  FEDSILO_ASSERT(neurons.axes.empty(), "the neuron merge works on spheres");
  const int n = neurons.size(), d = neurons.d;
  FEDSILO_ASSERT(static_cast<int>(clusterOf.size()) == n);
  NeuronMergeResult res;
  res.groupOf.assign(static_cast<std::size_t>(n), -1);
  auto center = [&](int i) { return neurons.centers.data() + static_cast<std::size_t>(i) * d; };
  auto emit = [&](const double* w) {
    res.neurons.insert(res.neurons.end(), w, w + d);
    return res.width++;
  };
  for (int q = 0; q < k; ++q) {  // every cluster, 0 included
    std::vector<int> set;
    for (int i = 0; i < n; ++i) {
      if (clusterOf[i] != q) continue;
      bool joins = true;
      for (int j : set) joins = joins && spheresIntersect(center(i), neurons.radii[i], center(j), neurons.radii[j], d);
      if (joins) {
        set.push_back(i);
      } else {
        res.groupOf[i] = emit(center(i));
      }
    }
    if (set.empty()) continue;
    if (set.size() == 1) {
      res.groupOf[set[0]] = emit(center(set[0]));
      continue;
    }
    BallSet sub;
    sub.d = d;
    for (int i : set) {
      sub.centers.insert(sub.centers.end(), center(i), center(i) + d);
      sub.radii.push_back(neurons.radii[i]);
    }
    const IntersectResult r = intersectBalls(sub, opt);
    const int idx = emit(r.w.data());
    for (int i : set) res.groupOf[i] = idx;
    ++res.mergedGroups;
    if (r.found) ++res.mergedFound;
  }
  for (int i = 0; i < n; ++i)
    FEDSILO_ASSERT(res.groupOf[i] >= 0, "neuron ", i, " has cluster ", clusterOf[i], " outside 0..", k - 1);
  return res;
}

}  // namespace fedsilo
