// In-memory datasets. Pixels stay compact (uint8) and are scaled to floats per batch, so no client
// ever holds a float copy of its data: clients are index lists into the shared training set.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace fedsilo {

struct Dataset {
  Shape shape;          // per-sample shape; dim() = shape.size()
  int numClasses = 0;
  // Exactly one of u8 / f32 holds the features, sample-major (sample i at [i*dim, (i+1)*dim)).
  std::vector<std::uint8_t> u8;
  std::vector<float> f32;
  float u8Scale = 1.0f / 255.0f;  // u8 features are multiplied by this when gathered
  std::vector<std::int32_t> labels;
  // Per-channel input scaling that gather applies after u8Scale: x <- (x - mean_c) / std_c, with
  // channel c = feature / (h * w) (tabular data: one channel per feature). Empty: none.
  std::vector<float> channelMean, channelStd;

  Index size() const { return static_cast<Index>(labels.size()); }
  int dim() const { return shape.size(); }
  bool isU8() const { return !u8.empty(); }
  // Writes samples idx[0..count) as columns of a column-major (dim x count) float matrix at out.
  void gather(const Index* idx, int count, float* out) const;
  // Same, into double (for tests and double-precision checks).
  void gather(const Index* idx, int count, double* out) const;
  // Requests the features of samples idx[0..count) into the cache, for a gather that comes later: the
  // training loop asks for the next batch before it trains on the current one. Reads nothing.
  void prefetch(const Index* idx, int count) const;
  // Labels histogram over the given indices (size numClasses).
  std::vector<Index> labelCounts(const IndexList& idx) const;
  // Sets the per-channel scaling (one mean/std per channel, std > 0).
  void setNormalization(const std::vector<double>& mean, const std::vector<double>& std);
  bool normalized() const { return !channelMean.empty(); }
  // What a zero feature becomes when gathered (the fill of augmented images), per channel.
  float zeroValue(int channel) const;

 private:
  std::vector<float> u8Table_;  // normalized u8: the gathered value of byte v in channel c at [c * 256 + v]
};

// A loaded dataset: the training pool that partitioners split among clients, and the held-out test
// set on which the global model is evaluated.
struct DataBundle {
  std::string name;
  Dataset train;
  Dataset test;
  // Natural partition (LEAF users, CSV/HDF5 client column, Synthetic users): client id per training
  // sample; empty when the dataset has none.
  std::vector<std::int32_t> naturalClient;
  // Optional natural client id per test sample (LEAF test files): lets a client's own test split come
  // from the dataset's test files instead of its training slice.
  std::vector<std::int32_t> naturalClientTest;
  int numNaturalClients = 0;
  // Token vocabulary for text datasets (index = token id), saved in the results file.
  std::vector<std::string> vocabulary;
  // Number of token ids for token datasets (>= vocabulary.size()); 0 for non-token data.
  int vocabSize = 0;
};

}  // namespace fedsilo
