// The pure numerical pieces of GEMS (Guha & Smith, "Model Aggregation via Good-Enough Model Spaces",
// arXiv 1805.07782), free of models, data and MPI so that they can be tested on constructed problems:
//   * the radius search of Algorithm 2 over a predicate "passes(point)",
//   * points on the surface of a ball / an axis-aligned ellipsoid (App. A),
//   * the intersection of balls, eq (2), by subgradient descent,
//   * k-means (k-means++ seeding) and the greedy per-cluster neuron merge of the MLP variant (Sec. 3.2).
// Everything is double precision and deterministic given the Rng.
#pragma once
#include <functional>
#include <vector>

#include "core/rng.hpp"

namespace fedsilo {

// ---- radius search (Algorithm 2) ---------------------------------------------------------------

struct RadiusSearchOptions {
  double rMax = 4000.0;  // R_max: the search interval is [0, R_max]
  double tol = 0.01;     // stop when hi - lo <= tol (the paper's Delta)
  int samples = 500;     // surface points tested per candidate radius
};

// The sampled surface of the set {c + r * (a ⊙ u) : ||u|| = 1, u_i = 0 outside the mask}.
// axes: per-coordinate scale a_i (empty: a sphere, a_i = 1); mask: coordinates that are perturbed
// (empty: all). A point is c + r * (a ⊙ z) / ||z||, z_i ~ N(0, 1) on the mask and 0 elsewhere, so it
// lies on the ellipsoid sum_i (x_i - c_i)^2 / (a_i r)^2 = 1 (the authors' EllipsoidSampler draws
// g_i ~ N(0, (a_i r)^2) and divides by sqrt(sum g_i^2 / (a_i r)^2): the same point).
struct SurfaceGeometry {
  std::vector<double> axes;
  std::vector<char> mask;
};

void sampleSurface(const std::vector<double>& center, double radius, const SurfaceGeometry& geom, Rng& rng,
                   std::vector<double>& point);

struct RadiusSearchResult {
  double radius = 0.0;        // the largest radius whose sampled surface passed (0 if none did)
  bool centerPasses = false;  // whether the centre itself passes (if not, no search is done)
  int bisections = 0;         // candidate radii tested
  long long evaluations = 0;  // predicate calls, the centre included
};

// Algorithm 2: lo = 0, hi = R_max; while hi - lo > tol: r = (lo + hi) / 2; r passes iff ALL of
// `samples` points drawn on the surface of radius r pass (stopping at the first failure); a passing r
// sets lo = r, a failing one hi = r. Returns lo, the largest radius that was actually verified (the
// authors return (lo + hi) / 2, up to tol / 2 larger and never tested). The centre is tested first; a
// centre that fails gives radius 0 (the good-enough set is empty around it).
RadiusSearchResult searchRadius(const std::vector<double>& center, const RadiusSearchOptions& opt,
                                const SurfaceGeometry& geom, Rng& rng,
                                const std::function<bool(const std::vector<double>& point)>& passes);

// ---- balls and their intersection, eq (2) ------------------------------------------------------

// K balls (or axis-aligned ellipsoids) in R^d: centres K x d row-major, radii K, axes K x d (empty:
// spheres).
struct BallSet {
  int d = 0;
  std::vector<double> centers, radii, axes;
  int size() const { return static_cast<int>(radii.size()); }
};

// Eq (2): f(w) = sum_k max(0, ||c_k - w|| - r_k) for spheres; for ellipsoids (App. A)
// f(w) = sum_k max(0, sqrt(sum_i (c_ki - w_i)^2 / (a_ki r_k)^2) - 1). f(w) = 0 exactly on the
// intersection of the sets.
double intersectionObjective(const BallSet& balls, const std::vector<double>& w);

struct IntersectOptions {
  double lr = 0.01;   // step size of the subgradient descent
  int steps = 10000;  // at most this many steps
};

struct IntersectResult {
  std::vector<double> w;   // the best iterate (lowest objective)
  double objective = 0.0;  // f(w)
  bool found = false;      // objective == 0: w lies in every set
  int steps = 0;           // steps taken
};

// Minimises eq (2) by subgradient descent w <- w - lr * g from the mean of the centres, where
// g = sum over violated sets of the gradient of their term ((w - c_k) / ||w - c_k|| for spheres).
// Stops as soon as f(w) == 0 exactly. found is true only then (the authors' code always reports
// success).
IntersectResult intersectBalls(const BallSet& balls, const IntersectOptions& opt);

// Whether two spheres intersect: ||c_a - c_b|| <= r_a + r_b.
bool spheresIntersect(const double* ca, double ra, const double* cb, double rb, int d);

// ---- Fisher-shaped ellipsoids (App. A) ----------------------------------------------------------

// Axis scales from a diagonal Fisher estimate: a_i = 1 / (|F_i| + 1e-5), then a_i <- max(0.1, a_i / max_j a_j)
// (the authors' EllipsoidSampler). Parameters the data constrains strongly get short axes.
std::vector<double> fisherAxes(const std::vector<double>& fisher);

// The top `prop` fraction (at least one coordinate) of coordinates by Fisher value (ties: lower
// index first); prop >= 1 gives an empty mask (all coordinates).
std::vector<char> fisherMask(const std::vector<double>& fisher, double prop);

// ---- k-means and the neuron merge (Sec. 3.2) ------------------------------------------------------

// Lloyd's k-means on n points of dimension dim (row-major), k-means++ seeding from `rng`; iterates
// until no assignment changes or maxIter. Ties go to the lowest cluster index; an empty cluster keeps
// its centre. k >= n gives every point its own cluster. Returns the cluster of every point.
std::vector<int> kMeans(const std::vector<double>& points, int n, int dim, int k, Rng& rng, int maxIter);

struct NeuronMergeResult {
  int width = 0;                // number of neurons emitted
  std::vector<double> neurons;  // width x dim, row-major, in emission order
  std::vector<int> groupOf;     // per input neuron: index of the emitted neuron that represents it
  int mergedGroups = 0;         // emitted neurons solved by eq (2) over >= 2 input neurons
  int mergedFound = 0;          // of those, how many reached objective 0
};

// Greedy merge within every cluster 0..k-1 (the authors' loop skips cluster 0): walk the cluster's
// neurons in index order; a neuron joins the running set if its ball intersects every ball already
// in it (pairwise test), else it is emitted unchanged. At the end of the cluster a set of one is
// emitted unchanged, a larger set is replaced by the eq (2) minimiser over its balls.
NeuronMergeResult mergeNeurons(const BallSet& neurons, const std::vector<int>& clusterOf, int k,
                               const IntersectOptions& opt);

}  // namespace fedsilo
