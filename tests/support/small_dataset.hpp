// A small separable classification set for trainer tests: n samples of 6 features and 3 classes,
// where the features j with j % 3 == label are shifted by 1.5, drawn from one fixed stream (the same
// set in every test that asks for n samples).
#pragma once
#include "core/rng.hpp"
#include "data/dataset.hpp"

namespace fedsilo::test {

inline Dataset separableDataset(int n) {
  Dataset ds;
  ds.shape = Shape{6, 1, 1};
  ds.numClasses = 3;
  Rng gen(11, -1, -1, Purpose::Misc);
  for (int i = 0; i < n; ++i) {
    const int y = i % 3;
    for (int j = 0; j < 6; ++j) ds.f32.push_back(static_cast<float>(gen.normal() + (j % 3 == y ? 1.5 : 0.0)));
    ds.labels.push_back(y);
  }
  return ds;
}

}  // namespace fedsilo::test
