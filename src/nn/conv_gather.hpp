// The gather tables of the direct convolutions (fp32 in conv2d_direct, bf16 in conv2d_bf16): over a
// zero-padded plane of channels x rows x cols per sample, the offset of every output position of a
// chunk of samples, and the offset of every kernel tap from it, so that the kernels read an input
// patch as plane[rowBase[i] + tap[j]] whatever the stride, padding or channel count.
#pragma once
#include <cstdint>

#include "core/types.hpp"

namespace fedsilo {

// `plane` has channels, rows, cols, perSample() and the int32 vectors rowBase and tap. Positions run
// over (sample, output row, output column) with output rows `rowStep` and columns `colStep` plane
// cells apart; taps over (channel, kh, kw) of a k x k kernel.
template <typename Plane>
void fillGatherTables(Plane& plane, int chunk, int k, int outRows, int outCols, int rowStep, int colStep) {
  plane.rowBase.clear();
  for (int b = 0; b < chunk; ++b)
    for (int r = 0; r < outRows; ++r)
      for (int c = 0; c < outCols; ++c)
        plane.rowBase.push_back(
            static_cast<std::int32_t>(b * plane.perSample() + Index(r) * rowStep * plane.cols + c * colStep));
  plane.tap.clear();
  for (int ch = 0; ch < plane.channels; ++ch)
    for (int kh = 0; kh < k; ++kh)
      for (int kw = 0; kw < k; ++kw)
        plane.tap.push_back(static_cast<std::int32_t>((Index(ch) * plane.rows + kh) * plane.cols + kw));
}

}  // namespace fedsilo
