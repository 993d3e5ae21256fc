// oneDNN as the float convolution backend (builds with -DFEDSILO_ONEDNN=ON only; docs/performance.md,
// "oneDNN as a backend", has the measurement that chose it for the presets' convolution shapes).
//
// The same contract as ConvDirect (nn/conv2d_direct.hpp): fedsilo's layouts in and out (a sample is
// C x H x W contiguous, weights [outC][inC][k][k], bias [outC]), ReLU optionally fused. Inside, oneDNN
// runs its convolution primitives on the blocked layouts it prefers; the reorders to and from
// fedsilo's layouts are part of every call.
//
// Fixed chunks: the batch runs in chunks of kChunk samples, the last one padded with zero samples, so
// one set of primitives and buffers, created by reserve(), serves every batch size (no allocation and
// no primitive creation afterwards). A zero-padded sample has dL/dy = 0 and adds exact zeros to the
// weight and bias gradients. The gradients are summed over chunks in chunk order, so results depend
// on the batch and kChunk only: the same at any rank count, and bit-identical run to run on one
// thread (oneDNN's primitives are deterministic on one thread; the constructor sets OpenMP to one).
#pragma once
#ifdef FEDSILO_ONEDNN
#include <memory>

namespace fedsilo {

// The shapes oneDNN runs: those where it measured faster than ConvDirect, the 5x5 stride-1 "same"
// convolutions of cnn_mcmahan and cnn_playerfl (bench/onednn_compare.cpp; docs/performance.md).
inline bool onednnConvChosen(int k, int stride, int pad) { return k == 5 && stride == 1 && pad == 2; }

class OnednnConv {
 public:
  // Samples per chunk: the training batch of W2 (32) and a quarter of cnn_playerfl's (128).
  static constexpr int kChunk = 32;

  OnednnConv(int inC, int h, int w, int outC, int k, int stride, int pad);
  ~OnednnConv();
  // Creates the primitives and buffers (once; maxBatch is not needed: every batch runs in kChunk chunks).
  void reserve(int maxBatch);
  // y = act(conv(x, w) + bias) for `batch` samples (x: inC*h*w per sample, y: outC*oh*ow).
  void forward(const float* w, const float* bias, const float* x, float* y, int batch, bool relu);
  // From dL/dy (of the ReLU's output y when relu): dw, db overwritten, dx (if not null) overwritten.
  void backward(const float* w, float* dw, float* db, const float* x, const float* y, const float* dy, float* dx,
                int batch, bool relu);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fedsilo
#endif
