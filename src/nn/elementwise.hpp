// Element-wise logistic and tanh whose result for an element depends on its value only, not on where it
// sits in an array. Eigen's array expressions run the elements from the first aligned address on in
// whole packets through its own polynomials and the rest one by one, through the C library (exp, and
// logistic below -9) or through the same polynomial with the compiler's choice of fused multiply-adds
// (tanh, logistic): an element's bits then depended on its row, on the batch size and on the buffer's
// alignment. Here every element goes through the same packet code: whole packets from the start of the
// range, then the remainder copied into one packet padded with zeros. Within a build the result is a
// function of the value alone. Between builds it is not: the polynomials are evaluated with the build's
// packets (AVX-512 or AVX2 with fused multiply-adds in the native build, SSE without them in the
// portable one; docs/performance.md, "Element-wise numerics").
#pragma once
#include <Eigen/Core>

namespace fedsilo {

// out[i] = 1 / (1 + exp(-x[i])) for i in [0, n): Eigen's logistic (for float a rational approximation,
// and its vectorised exp below -9). in == out is allowed.
template <typename T>
void logisticOf(const T* in, T* out, Eigen::Index n);

// out[i] = tanh(in[i]): Eigen's vectorised tanh where it has one (float: a rational approximation), else
// the C library's per element (double), which depends on the value alone too. in == out is allowed.
template <typename T>
void tanhOf(const T* in, T* out, Eigen::Index n);

}  // namespace fedsilo
