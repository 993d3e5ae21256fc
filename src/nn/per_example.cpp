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

template void addDenseGradNormsSquared<float>(const CMapT<float>&, const CMapT<float>&, double*);
template void addDenseGradNormsSquared<double>(const CMapT<double>&, const CMapT<double>&, double*);

}  // namespace fedsilo
