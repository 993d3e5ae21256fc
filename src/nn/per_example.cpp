#include "nn/per_example.hpp"

#include "core/error.hpp"

namespace fedsilo {

PerExampleMethod perExampleMethod(Index positions, Index inDim, Index outDim) {
  // Multiply-adds: ghost T^2 (d + p) against materialised T d p; divide both by T.
  const double ghost = static_cast<double>(positions) * static_cast<double>(inDim + outDim);
  const double materialise = static_cast<double>(inDim) * static_cast<double>(outDim);
  return ghost < materialise ? PerExampleMethod::Ghost : PerExampleMethod::Materialise;
}

template <typename T>
void addDenseGradNormsSquared(const CMapT<T>& x, const CMapT<T>& dz, double* norms2) {
  FEDSILO_ASSERT(x.cols() == dz.cols(), "input and gradient batch sizes differ");
  // Squared column norms in T (Eigen vectorises them); a relative error of about 1e-7 in float moves
  // a clip factor by as little.
  const auto x2 = x.colwise().squaredNorm();
  const auto d2 = dz.colwise().squaredNorm();
  for (Index i = 0; i < x.cols(); ++i) norms2[i] += static_cast<double>(d2(i)) * (static_cast<double>(x2(i)) + 1.0);
}

template <typename T>
double tokenRowsNormSquared(const T* g, const Index* tokens, Index steps, Index dim, VecT<T>& row) {
  double sum = 0.0;
  for (Index t = 0; t < steps; ++t) {
    bool seen = false;  // counted with its first position
    for (Index u = 0; u < t && !seen; ++u) seen = tokens[u] == tokens[t];
    if (seen) continue;
    row = Eigen::Map<const VecT<T>>(g + t * dim, dim);
    for (Index u = t + 1; u < steps; ++u)
      if (tokens[u] == tokens[t]) row += Eigen::Map<const VecT<T>>(g + u * dim, dim);
    sum += static_cast<double>(row.squaredNorm());
  }
  return sum;
}

template double tokenRowsNormSquared<float>(const float*, const Index*, Index, Index, VecT<float>&);
template double tokenRowsNormSquared<double>(const double*, const Index*, Index, Index, VecT<double>&);
template void addDenseGradNormsSquared<float>(const CMapT<float>&, const CMapT<float>&, double*);
template void addDenseGradNormsSquared<double>(const CMapT<double>&, const CMapT<double>&, double*);

}  // namespace fedsilo
