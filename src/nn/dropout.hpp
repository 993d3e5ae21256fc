// Inverted dropout: in training each value is zeroed with probability p and the survivors are
// scaled by 1/(1-p), so evaluation (training = false) is the identity.
//
// Masks come from Rng(seed, client, round, Purpose::Dropout, extra) with
// extra = (layerIndex << 32) | batchCounter, where batchCounter counts training forwards since the
// last setRandomContext. Consecutive batches therefore draw different masks, and the whole
// sequence is a function of (seed, client, round), never of the MPI rank. Calling
// setRandomContext again with the same key replays the same masks (the gradient tests rely on it).
#pragma once
#include <cstdint>

#include "nn/layer.hpp"

namespace fedsilo {

template <typename T>
class DropoutT : public LayerT<T> {
 public:
  DropoutT(Shape shape, double p);
  std::string kind() const override { return "dropout"; }
  Shape outputShape() const override { return shape_; }
  void reserve(int maxBatch) override;
  void setRandomContext(std::uint64_t seed, std::int64_t client, std::int64_t round, int layerIndex) override;
  void forward(const CMapT<T>& x, MapT<T>& y, bool training) override;
  void backward(const CMapT<T>& x, const CMapT<T>& y, const CMapT<T>& dy, MapT<T>* dx) override;
  double rate() const { return p_; }
  std::uint32_t batchCounter() const { return counter_; }

 private:
  Shape shape_;
  double p_;
  int maxBatch_ = 0;
  AlignedVector<T> mask_;  // 0 or 1/(1-p) per value of the last training batch
  bool lastTraining_ = false;
  std::uint64_t seed_ = 0;
  std::int64_t client_ = -1, round_ = -1;
  int layerIndex_ = 0;
  std::uint32_t counter_ = 0;
};

using Dropout = DropoutT<float>;

}  // namespace fedsilo
