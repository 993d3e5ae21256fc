// One LSTM layer with full backpropagation through time, PyTorch semantics (nn.LSTM, one layer,
// zero initial state):
//   [i; f; g; o] = W_ih x_t + b_ih + W_hh h_{t-1} + b_hh   (gate order i, f, g, o)
//   c_t = sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g),  h_t = sigmoid(o) * tanh(c_t)
// Parameters (one block): w_ih [4H][in], w_hh [4H][H], b_ih [4H], b_hh [4H], all initialised
// U(-1/sqrt(H), 1/sqrt(H)) as PyTorch does (fanIn = H for every tensor).
//
// A sample's input column is seqLen * inputDim, time-major (step t at rows [t*in, (t+1)*in)). The
// output is h_{T-1} (hidden values) or, with returnSequences, every h_t time-major (seqLen*hidden),
// which is the input layout of a stacked LSTM layer.
//
// Internally the batch is reordered step-major (column t*B + b) so that the input projection of
// all steps is one GEMM, every step's state is a contiguous hidden x B block, and the weight
// gradients are one GEMM each over all steps.
#pragma once
#include "nn/gemm.hpp"
#include "nn/layer.hpp"
#include "nn/per_example.hpp"

namespace fedsilo {

template <typename T>
class LstmT : public LayerT<T> {
 public:
  LstmT(int inputDim, int hidden, int seqLen, bool returnSequences);
  std::string kind() const override { return "lstm"; }
  Shape outputShape() const override { return returnSeq_ ? Shape{1, seqLen_, hidden_} : Shape{hidden_, 1, 1}; }
  // Per step, forward: the gates' two products (8H(in + H)), their two biases (8H), four nonlinearities
  // (4H) and the cell and hidden updates (5H: f c + i g, tanh c, o tanh c). Backward: the weight and bias
  // gradients (8H(in + H) + 8H), the recurrent dh = W_hh^T dz (8H^2) and the gates' derivatives (12H);
  // the input gradient W_ih^T dz (8H in).
  FlopCount flopsPerSample() const override {
    const double H = hidden_, in = in_, steps = seqLen_;
    return {steps * (8 * H * (in + H) + 17 * H), steps * (8 * H * (in + H) + 8 * H * H + 20 * H), steps * 8 * H * in};
  }
  std::vector<ParamSpec> paramSpecs() const override;
  void bind(T* params, T* grads) override;
  void reserve(int maxBatch) override;
  void forward(const CMapT<T>& x, MapT<T>& y, bool training) override;
  void backward(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) override;
  // Backpropagation through time alone, then per sample sum_t dz_t [x_t; h_{t-1}]^T by the cheaper of
  // materialising and the ghost norm (nn/per_example.hpp) over its T steps, plus both biases'
  // ||sum_t dz_t||^2 each; dx as in backward. No weight gradient is formed.
  bool backwardPerExample(const CMapT<T>& x, const CMapT<T>& dz, MapT<T>* dx, double* norms2) override;
  int inputDim() const { return in_; }
  int hidden() const { return hidden_; }
  bool returnSequences() const { return returnSeq_; }

 private:
  void reorderInput(const CMapT<T>& x);  // x (time-major per sample) -> xtb_ (column t*B + b)
  void backpropagateThroughTime(const CMapT<T>& dy);  // dy -> dz_ for every step
  void inputGradient(MapT<T>& dx);                    // dx = W_ih^T dz_ (overwrites xtb_)

  int in_, hidden_, seqLen_;
  bool returnSeq_;
  T* wih_ = nullptr;
  T* whh_ = nullptr;
  T* bih_ = nullptr;
  T* bhh_ = nullptr;
  T* dwih_ = nullptr;
  T* dwhh_ = nullptr;
  T* dbih_ = nullptr;
  T* dbhh_ = nullptr;
  int maxBatch_ = 0;
  // Step-major workspaces (B = the current batch; slab t = columns [t*B, (t+1)*B)).
  AlignedVector<T> xtb_;    // in x T*B: the input; reused for dx in backward
  AlignedVector<T> gates_;  // 4H x T*B: pre-activations, then activations i, f, g, o
  AlignedVector<T> hs_;     // H x (T+1)*B: slab 0 = h_{-1} = 0, slab t+1 = h_t
  AlignedVector<T> cs_;     // H x (T+1)*B: slab 0 = c_{-1} = 0, slab t+1 = c_t
  AlignedVector<T> tc_;     // H x T*B: tanh(c_t)
  AlignedVector<T> dz_;     // 4H x T*B: dL/d(pre-activations)
  AlignedVector<T> dh_, dc_, bsum_;
  bool xtbValid_ = false;
  GemmWorkspace<T> gemmIn_, gemmRec_, gemmBackH_, gemmWih_, gemmWhh_, gemmDx_;
};

using Lstm = LstmT<float>;

}  // namespace fedsilo
