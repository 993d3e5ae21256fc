// Helpers for the transformer layers, whose activations are token columns: a batch of B sequences
// of T tokens of width d is the d x (T * B) column-major matrix whose column b * T + t is token t
// of sample b (the time-major per-sample layout of nn/embedding.hpp, read as one matrix).
#pragma once
#include "nn/layer.hpp"

namespace fedsilo {

// sum[r] = sum over columns of m(r, .), added column by column so that the result does not depend
// on buffer alignment.
template <typename T>
void sumColumnsInto(const T* m, Index rows, Index cols, T* sum) {
  Eigen::Map<VecT<T>> s(sum, rows);
  s.setZero();
  for (Index n = 0; n < cols; ++n) s += CMapT<T>(m + n * rows, rows, 1);
}

// m(., n) += bias for every column n.
template <typename T>
void addBiasToColumns(T* m, Index rows, Index cols, const T* bias) {
  MapT<T>(m, rows, cols).colwise() += Eigen::Map<const VecT<T>>(bias, rows);
}

}  // namespace fedsilo
