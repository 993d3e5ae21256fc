// The derived geometry of one convolution layer, computed once by Conv2DT (nn/conv2d.hpp) and shared
// with its direct paths, fp32 (nn/conv2d_direct.hpp) and bf16 (nn/conv2d_bf16.hpp).
#pragma once
#include "core/types.hpp"

namespace fedsilo {

// n rounded up to a multiple of 16: the channel strides of the packed operands (one zmm of floats).
inline int roundUp16(int n) { return (n + 15) / 16 * 16; }

// A k x k convolution of samples of inC x h x w into outC channels at `stride`, zero-padded by `pad`
// (Conv2DT checks that the values make sense before computing one).
struct ConvGeometry {
  ConvGeometry(int inChannels, int height, int width, int outChannels, int kernel, int step, int padding)
      : inC(inChannels),
        h(height),
        w(width),
        outC(outChannels),
        k(kernel),
        stride(step),
        pad(padding),
        oh((height + 2 * padding - kernel) / step + 1),
        ow((width + 2 * padding - kernel) / step + 1),
        ohw(Index(oh) * ow),
        kdim(Index(inChannels) * kernel * kernel),
        inSize(Index(inChannels) * height * width),
        outSize(Index(outChannels) * ohw),
        ldw(roundUp16(outChannels)),
        ldwD(roundUp16(inChannels)) {}

  int inC, h, w, outC, k, stride, pad;
  int oh, ow;             // output rows and columns
  Index ohw;              // output positions per channel
  Index kdim;             // inC k k: the weights of one output channel (the forward's reduction)
  Index inSize, outSize;  // values per sample of the input and of the output (channels x rows x columns)
  int ldw, ldwD;          // channel strides of the packed weights: outC and inC rounded up to 16
};

}  // namespace fedsilo
