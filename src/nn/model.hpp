// Model: a stack of layers over ONE flat parameter buffer (and one gradient buffer) with named
// layer blocks. A "layer block" is what PLayer-FL, FedBABU and FedLP federate: a conv or dense layer
// (weight + bias), an LSTM layer (all its gates), an embedding table. Blocks are contiguous in the
// buffer, in model order, so "the first p layers" is a prefix of the buffer.
#pragma once
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/zeroed_buffer.hpp"
#include "nn/init.hpp"
#include "nn/layer.hpp"
#include "nn/loss.hpp"

namespace fedsilo {

template <typename T>
class DenseT;
template <typename T>
class ReluFusableT;
template <typename T>
class PoolFusableT;
template <typename T>
class MaxPool2DT;

struct ParamTensor {
  std::string name;  // "fc1.weight"
  Index offset = 0;  // into the flat buffer
  Index size = 0;
  bool isBias = false;
};

struct LayerBlock {
  std::string name;  // "fc1"
  Index offset = 0;
  Index size = 0;
  std::vector<ParamTensor> tensors;
};

template <typename T>
class ModelT {
 public:
  ModelT(Shape input, int numClasses);
  ModelT(const ModelT&) = delete;
  ModelT& operator=(const ModelT&) = delete;

  // --- building -----------------------------------------------------------------------------
  // Appends a layer whose input is the previous layer's output. A layer with parameters must get a
  // unique block name; a parameterless layer passes "".
  LayerT<T>& add(std::unique_ptr<LayerT<T>> layer, const std::string& blockName = "");
  void setLoss(std::unique_ptr<LossT<T>> loss);
  // Allocates the flat buffers and binds every layer. No layer can be added afterwards.
  // OutOfMemoryError (core/memory.hpp) names the parameter count and size when they do not fit.
  void finalize();
  // Initialises all parameters from `rng` (one stream for the whole model, layers in order), with the
  // scheme set by setInitialization (default: PyTorch's defaults; nn/init.hpp).
  void initialize(Rng& rng);
  void setInitialization(const InitOptions& options) { init_ = options; }
  const InitOptions& initialization() const { return init_; }
  // Preallocates activation/gradient workspaces for batches up to maxBatch (forward, training).
  // OutOfMemoryError names the buffer (the model's activations or one layer's workspace), the batch
  // size and the bytes.
  void reserve(int maxBatch);
  // The batch to reserve for training batches of trainBatch and evaluation batches of evalBatch:
  // evaluate() runs larger batches in chunks, so the workspaces need not grow with the evaluation
  // batch (W2's backward workspaces alone were 200 MB at evaluation batch 1000). At least 32 and a
  // multiple of 32 (when above 32), the Dense forward's sample chunk, so that chunking changes no
  // result (a sample's logits depend only on its place in a 32-sample chunk, docs/performance.md).
  static int reserveBatch(int trainBatch, int evalBatch);
  void setRandomContext(std::uint64_t seed, std::int64_t client, std::int64_t round);

  // --- layout -------------------------------------------------------------------------------
  Index numParams() const { return static_cast<Index>(params_.size()); }
  T* params() { return params_.data(); }
  const T* params() const { return params_.data(); }
  // Overwrites every parameter with `values` (numParams() of them): a global model, a client's kept
  // state, a snapshot.
  void setParams(const std::vector<T>& values) {
    FEDSILO_ASSERT(static_cast<Index>(values.size()) == numParams(), "setParams: ", values.size(), " values for ",
                   numParams(), " parameters");
    std::copy(values.begin(), values.end(), params_.begin());
  }
  T* grads() { return grads_.data(); }
  const T* grads() const { return grads_.data(); }
  AlignedVector<T>& paramVector() { return params_; }
  const std::vector<LayerBlock>& blocks() const { return blocks_; }
  int blockIndex(const std::string& name) const;  // -1 if absent
  Shape inputShape() const { return input_; }
  int inputSize() const { return input_.size(); }
  int numClasses() const { return classes_; }
  std::size_t numLayers() const { return layers_.size(); }
  LayerT<T>& layer(std::size_t i) { return *layers_[i]; }
  LossT<T>& loss() { return *loss_; }
  int maxBatch() const { return maxBatch_; }
  std::string summary() const;
  // The FLOPs one training sample costs: every layer's forward and parameter gradients, and the input
  // gradient of every layer but the first (LayerT::flopsPerSample; the loss, O(classes), is not counted).
  double trainFlopsPerSample() const;

  // --- compute ------------------------------------------------------------------------------
  // Forward pass on x (inputSize x batch, column-major). Returns the logits (numClasses x batch),
  // valid until the next call.
  CMapT<T> forward(const T* x, int batch, bool training);
  // Forward (training mode) + loss + backward: fills grads(), returns the mean batch loss.
  double lossAndGradient(const T* x, const std::int32_t* labels, int batch);
  // Evaluation-mode forward; writes argmax predictions, returns the summed loss. Any batch: one
  // larger than maxBatch() runs in chunks of maxBatch() samples, with the same results as one pass
  // when maxBatch() is a multiple of 32 (reserveBatch()).
  double evaluate(const T* x, const std::int32_t* labels, int batch, std::int32_t* predictions);
  // Backward from a given dL/dlogits (after forward(training=true) on the same batch); fills grads().
  // When dInput != nullptr, also writes dL/dx (inputSize x batch).
  void backward(const T* dLogits, int batch, T* dInput = nullptr);
  // One plain-SGD training step: lossAndGradient() then p -= lr * g over every parameter, with Dense
  // layers updating their weights inside the weight-gradient kernel (DenseT::backwardSgd: their
  // weight gradients are never stored, grads() is stale there afterwards). For optimisers without
  // state: no momentum, weight decay or gradient hook. p - lr * g is rounded once (fma), as
  // Sgd::step in builds with FMA, where both give the same bits. Returns the mean batch loss.
  double sgdStep(const T* x, const std::int32_t* labels, int batch, T lr);
  // DP-SGD (nn/model_clipped.cpp, "ghost clipping"): forward (training mode) and loss, then grads() =
  // sum_i min(1, clip / ||g_i||) g_i, g_i the gradient of sample i's own loss; returns the mean batch
  // loss. The per-sample norms come from a backward pass that forms no parameter gradient and keeps each
  // parameterised layer's dL/d(output); scaling its column i by the clip factor and forming the layer's
  // gradient from it gives the clipped sum, as it is linear in each sample's column. `norms` receives
  // ||g_i||. Throws ConfigError naming a parameterised layer without per-example norms
  // (LayerT::backwardPerExample).
  double lossAndClippedGradient(const T* x, const std::int32_t* labels, int batch, double clip,
                                double* norms = nullptr);

  // Every Dense or Conv2D layer directly followed by a ReLU layer runs as one fused pass
  // (ReluFusableT::forwardRelu/backwardRelu: bias and activation applied while the output is written
  // once, pre-activation never stored); where such a pair is followed by a 2 x 2, stride-2 max-pool and
  // the layer can (PoolFusableT: Conv2D on its direct path), the three run as one pass,
  // forward and backward (the ReLU's output is then never stored). On by default; results are
  // bit-identical either way. A backward runs the passes of its forward, whatever setFusion said since.
  void setFusion(bool on) { fusion_ = on; }
  bool fusion() const { return fusion_; }
  // How many layer, ReLU, max-pool triples run their backward as one (0 with fusion off).
  int pooledTriples() const {
    return fusion_ ? static_cast<int>(std::count_if(pooled_.begin(), pooled_.end(), [](auto* p) { return p != nullptr; }))
                   : 0;
  }

 private:
  // DP-SGD: norms2[i] = the squared norm of sample i's contribution to the batch gradient, from dL/dlogits
  // (model_clipped.cpp).
  void ghostNormsSquared(const T* dLogits, int batch, double* norms2);
  Shape input_;
  int classes_;
  bool finalized_ = false;
  int maxBatch_ = 0;
  std::vector<std::unique_ptr<LayerT<T>>> layers_;
  std::vector<std::string> layerBlock_;  // block name per layer ("" if none)
  std::vector<Shape> outShapes_;
  std::unique_ptr<LossT<T>> loss_;
  AlignedVector<T> params_, grads_;
  std::vector<LayerBlock> blocks_;
  std::vector<Index> layerParamOffset_;
  // fused_[i]: layer i when layer i + 1 is a ReLU it can fuse with, else nullptr; dense_[i]: layer i
  // as a DenseT (the SGD step's fused update), else nullptr.
  std::vector<ReluFusableT<T>*> fused_;
  std::vector<DenseT<T>*> dense_;
  // pooled_[i]: layer i when fused_[i] and layer i + 2 is a max-pool its backward can start from
  // (poolAfter_[i]), else nullptr.
  std::vector<PoolFusableT<T>*> pooled_;
  std::vector<MaxPool2DT<T>*> poolAfter_;
  bool fusion_ = true;
  bool poolFusion_ = true;       // false: forward runs fused triples as their parts (DP-SGD's norms pass)
  bool lastPoolFusion_ = true;   // fusion_ && poolFusion_ at the last forward
  InitOptions init_;
  // Workspaces: acts_[i] is the output of layer i (acts_ input is copied nowhere: layer 0 reads x).
  // ZeroedBuffers: reserve() allocates them, the first pass maps their pages (a --dry-run never does).
  std::vector<ZeroedBuffer<T>> acts_;
  ZeroedBuffer<T> gradA_, gradB_, dlogits_;
  AlignedVector<T> ghostDz_;        // DP-SGD's norms pass: every parameterised layer's dL/d(output)
  std::vector<double> ghostNorms2_;  // DP-SGD's norms pass: ||g_i||^2 per sample
  const T* lastInput_ = nullptr;
  int lastBatch_ = 0;
  bool lastFusion_ = true;  // fusion_ at the last forward: the backward must run the same passes (a fused
                            // triple leaves the ReLU's output unwritten)

  void findPooled();
  // backward(); with sgdLr, the SGD step of sgdStep() as well.
  void backwardImpl(const T* dLogits, int batch, T* dInput, const T* sgdLr);
  // One layer's (or fused pair's) backward from its input x, output y and dL/dy.
  void backwardLayer(std::size_t first, std::size_t last, const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy,
                     MapT<T>* dx, const T* sgdLr);
};

using Model = ModelT<float>;

}  // namespace fedsilo
