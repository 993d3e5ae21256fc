// Max pooling over 2 x 2 windows with stride 2 (the presets' pool, nn/pool.hpp), as plain loops for any
// element type: MaxPool2DT<double> calls them directly, the avx2 and generic kernel sets instantiate
// them for float (the avx512 set has its own, nn/pool_kernels_avx512.hpp, with the same results).
//
// Layout: `planes` planes of h x w values, one after the other (a batch of C x H x W samples is
// batch * C planes); the output is oh x ow = (h / 2) x (w / 2) per plane, one plane after the other.
// Instead of an input index, every output keeps the position of its maximum within its window, one
// byte: 0 top left, 1 top right, 2 bottom left, 3 bottom right. The windows do not overlap, so the
// backward writes dx in one dense pass (the gradient where the position matches, else 0) instead of
// zeroing dx and scattering into it.
// Rules (as PyTorch's CPU kernel): a tie goes to the first position in that order; the first NaN in
// that order takes the window (value and gradient).
#pragma once
#include <cstdint>

#include "nn/kernel_table.hpp"

namespace fedsilo::kernels {
namespace {

// The first position in (a0, a1, b0, b1) that holds v, as 0/1 factors so that no branch is generated:
// data-dependent branches mispredict on random activations about every other window.
template <typename T>
inline std::uint8_t firstMaxPosition(T v, T a0, T a1, T b0) {
  const int n0 = v != a0, n1 = v != a1, n2 = v != b0;
  return static_cast<std::uint8_t>(n0 * (1 + n1 * (1 + n2)));
}

// One window by the rule's definition (the first strictly greater value, or the first NaN, wins).
template <typename T>
inline void poolWindowWithNaN(const T* a, int w, T* out, std::uint8_t* pos) {
  const T v[4] = {a[0], a[1], a[w], a[w + 1]};
  int best = 0;
  for (int i = 1; i < 4; ++i)
    if (v[i] > v[best] || (v[i] != v[i] && v[best] == v[best])) best = i;
  *out = v[best];
  *pos = static_cast<std::uint8_t>(best);
}

// One output row: the windows of input rows a and a + w. The maxima by selects in the rule's order
// (a1 > a0 ? a1 : a0 keeps the first of equal values), then the positions; a row with a NaN goes
// window by window through the definition.
template <typename T>
void maxPoolRowPlain(const T* a, int w, int ow, T* out, std::uint8_t* pos) {
  const T* d = a + w;
  int nan = 0;
  for (int j = 0; j < ow; ++j) {
    const T a0 = a[2 * j], a1 = a[2 * j + 1], b0 = d[2 * j], b1 = d[2 * j + 1];
    const T m0 = a1 > a0 ? a1 : a0;
    const T m1 = b1 > b0 ? b1 : b0;
    out[j] = m1 > m0 ? m1 : m0;
    nan |= (a0 != a0) | (a1 != a1) | (b0 != b0) | (b1 != b1);
  }
  if (nan) {
    for (int j = 0; j < ow; ++j) poolWindowWithNaN(a + 2 * j, w, out + j, pos + j);
    return;
  }
  for (int j = 0; j < ow; ++j) pos[j] = firstMaxPosition(out[j], a[2 * j], a[2 * j + 1], d[2 * j]);
}

template <typename T>
void maxPool2x2Plain(const T* x, Index planes, int h, int w, T* y, std::uint8_t* pos) {
  const int oh = h / 2, ow = w / 2;
  for (Index p = 0; p < planes; ++p)
    for (int r = 0; r < oh; ++r) {
      const Index o = (p * oh + r) * ow;
      maxPoolRowPlain(x + p * h * w + Index(2 * r) * w, w, ow, y + o, pos + o);
    }
}

// The input rows and columns no window covers (the last of an odd h or w) get a zero gradient.
template <typename T>
void zeroUncovered(T* plane, int h, int w) {
  if (w % 2)
    for (int r = 0; r < h; ++r) plane[Index(r) * w + w - 1] = T(0);
  if (h % 2)
    for (int c = 0; c < w; ++c) plane[Index(h - 1) * w + c] = T(0);
}

// dx from dL/dy and the positions, a pair of input rows at a time: zeroed, then each gradient stored
// at its window's winner (an address computed without a branch: a branch on the position mispredicts
// on random activations). The gradient is written as 0 + dy, the value the scatter into a zeroed dx
// gave (-0 becomes +0).
template <typename T>
void maxPool2x2BackwardPlain(const T* dy, const std::uint8_t* pos, Index planes, int h, int w, T* dx) {
  const int oh = h / 2, ow = w / 2;
  for (Index p = 0; p < planes; ++p) {
    T* plane = dx + p * h * w;
    for (int r = 0; r < oh; ++r) {
      T* top = plane + Index(2 * r) * w;
      for (int c = 0; c < 2 * w; ++c) top[c] = T(0);
      const Index o = (p * oh + r) * ow;
      for (int j = 0; j < ow; ++j) {
        const int at = pos[o + j];
        top[(at >> 1) * w + 2 * j + (at & 1)] = T(0) + dy[o + j];
      }
    }
    zeroUncovered(plane, h, w);
  }
}

}  // namespace
}  // namespace fedsilo::kernels
