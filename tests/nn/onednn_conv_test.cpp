// The oneDNN convolution backend (builds with -DFEDSILO_ONEDNN=ON only; without the option this file
// compiles to nothing): it agrees with the hand-written ConvDirect within a stated tolerance, is
// bit-identical run to run, gives every sample the same output and input gradient whatever batch it is
// in (so results do not depend on how clients are spread over ranks), adds exact zeros for the padding
// of its last chunk, and is what Conv2DT<float> runs for the shapes it was chosen for.
#ifdef FEDSILO_ONEDNN
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "nn/conv2d.hpp"
#include "nn/conv2d_direct.hpp"
#include "nn/onednn_conv.hpp"

namespace fedsilo::test {
namespace {

struct Shape5 {
  int inC, hw, outC;
  Index inSize() const { return static_cast<Index>(inC) * hw * hw; }
  Index outSize() const { return static_cast<Index>(outC) * hw * hw; }
  std::size_t weights() const { return static_cast<std::size_t>(outC) * inC * 25; }
};

std::vector<float> uniform(std::size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

// One backend's outputs for one batch.
struct Result {
  std::vector<float> y, dw, db, dx;
};

// Runs forward then backward (ReLU fused when relu) on the given data.
template <typename Conv>
Result run(Conv& conv, const Shape5& s, const std::vector<float>& params, const std::vector<float>& x,
           const std::vector<float>& dy, int batch, bool relu) {
  Result r{std::vector<float>(s.outSize() * batch), std::vector<float>(s.weights()), std::vector<float>(s.outC),
           std::vector<float>(s.inSize() * batch)};
  const float* w = params.data();
  const float* b = params.data() + s.weights();
  conv.forward(w, b, x.data(), r.y.data(), batch, relu);
  conv.backward(w, r.dw.data(), r.db.data(), x.data(), r.y.data(), dy.data(), r.dx.data(), batch, relu);
  return r;
}

// max |a - b| / max |b|
double relativeError(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

struct Data {
  std::vector<float> params, x, dy;
  Data(const Shape5& s, int batch, unsigned seed)
      : params(uniform(s.weights() + s.outC, seed, -0.2f, 0.2f)),
        x(uniform(s.inSize() * batch, seed + 1, 0.0f, 1.0f)),
        dy(uniform(s.outSize() * batch, seed + 2)) {}
};

// 1e-5 of the largest magnitude: both sum the same products in float, in different orders; measured
// 1e-6 to 8e-6 on the presets' shapes (bench/onednn_compare.cpp), 4e-7 to 3e-6 here.
constexpr double kTolerance = 2e-5;

TEST(OnednnConv, AgreesWithTheHandWrittenKernels) {
  // 70 samples: two full chunks of 32 and a padded one of 6
  for (const Shape5 s : {Shape5{1, 12, 8}, Shape5{16, 9, 24}, Shape5{20, 7, 36}}) {
    for (const bool relu : {false, true}) {
      const int batch = 70;
      const Data d(s, batch, 7);
      OnednnConv onednn(s.inC, s.hw, s.hw, s.outC, 5, 1, 2);
      ConvDirect direct(s.inC, s.hw, s.hw, s.outC, 5, 1, 2);
      onednn.reserve(batch);
      direct.reserve(batch);
      const Result a = run(onednn, s, d.params, d.x, d.dy, batch, relu);
      const Result b = run(direct, s, d.params, d.x, d.dy, batch, relu);
      SCOPED_TRACE(testing::Message() << "inC " << s.inC << " hw " << s.hw << " outC " << s.outC << " relu " << relu);
      EXPECT_LT(relativeError(a.y, b.y), kTolerance);
      EXPECT_LT(relativeError(a.dw, b.dw), kTolerance);
      EXPECT_LT(relativeError(a.db, b.db), kTolerance);
      EXPECT_LT(relativeError(a.dx, b.dx), kTolerance);
    }
  }
}

TEST(OnednnConv, BitIdenticalRunToRun) {
  const Shape5 s{16, 9, 24};
  const Data d(s, 45, 11);
  OnednnConv first(s.inC, s.hw, s.hw, s.outC, 5, 1, 2), second(s.inC, s.hw, s.hw, s.outC, 5, 1, 2);
  first.reserve(45);
  second.reserve(45);
  const Result a = run(first, s, d.params, d.x, d.dy, 45, true);
  const Result b = run(first, s, d.params, d.x, d.dy, 45, true);
  const Result c = run(second, s, d.params, d.x, d.dy, 45, true);
  for (const Result* r : {&b, &c}) {
    EXPECT_EQ(a.y, r->y);
    EXPECT_EQ(a.dw, r->dw);
    EXPECT_EQ(a.db, r->db);
    EXPECT_EQ(a.dx, r->dx);
  }
}

// A sample's output and input gradient do not depend on the other samples of its batch or on its
// position in it (the chunking and the zero padding are invisible): what lets a client's results be
// the same on any rank.
TEST(OnednnConv, PerSampleResultsIndependentOfTheBatch) {
  const Shape5 s{8, 10, 16};
  const int big = 40, small = 3, offset = 33;  // samples 33..35 of the big batch: its padded last chunk
  const Data d(s, big, 5);
  OnednnConv conv(s.inC, s.hw, s.hw, s.outC, 5, 1, 2);
  conv.reserve(big);
  const Result whole = run(conv, s, d.params, d.x, d.dy, big, true);
  const std::vector<float> x(d.x.begin() + offset * s.inSize(), d.x.begin() + (offset + small) * s.inSize());
  const std::vector<float> dy(d.dy.begin() + offset * s.outSize(), d.dy.begin() + (offset + small) * s.outSize());
  const Result part = run(conv, s, d.params, x, dy, small, true);
  EXPECT_TRUE(std::equal(part.y.begin(), part.y.end(), whole.y.begin() + offset * s.outSize()));
  EXPECT_TRUE(std::equal(part.dx.begin(), part.dx.end(), whole.dx.begin() + offset * s.inSize()));
}

// Samples with dL/dy = 0 change no gradient bit: the padded samples of the last chunk are such samples.
TEST(OnednnConv, ZeroGradientSamplesAddExactZeros) {
  const Shape5 s{8, 10, 16};
  const Data d(s, 40, 9);
  OnednnConv conv(s.inC, s.hw, s.hw, s.outC, 5, 1, 2);
  conv.reserve(40);
  std::vector<float> dy = d.dy;
  std::fill(dy.begin() + 32 * s.outSize(), dy.end(), 0.0f);  // samples 32..39: no gradient
  const Result with = run(conv, s, d.params, d.x, dy, 40, false);
  const Result without = run(conv, s, d.params, d.x, d.dy, 32, false);
  EXPECT_EQ(with.dw, without.dw);
  EXPECT_EQ(with.db, without.db);
}

// Conv2DT<float> runs oneDNN for the chosen shapes (the presets' 5x5 "same" convolutions) and
// ConvDirect for the others.
TEST(OnednnConv, Conv2DRunsItForTheChosenShapes) {
  EXPECT_TRUE(onednnConvChosen(5, 1, 2));
  EXPECT_FALSE(onednnConvChosen(3, 1, 1));
  EXPECT_FALSE(onednnConvChosen(5, 2, 2));
  const Shape5 s{4, 8, 12};
  const int batch = 5;
  const Data d(s, batch, 3);
  std::vector<float> params = d.params, grads(params.size());
  Conv2DT<float> layer(s.inC, s.hw, s.hw, s.outC, 5, 1, 2);
  layer.bind(params.data(), grads.data());
  layer.reserve(batch);
  std::vector<float> y(s.outSize() * batch);
  MapT<float> ym(y.data(), s.outSize(), batch);
  layer.forwardRelu(CMapT<float>(d.x.data(), s.inSize(), batch), ym);
  OnednnConv onednn(s.inC, s.hw, s.hw, s.outC, 5, 1, 2);
  onednn.reserve(batch);
  const Result r = run(onednn, s, d.params, d.x, d.dy, batch, true);
  EXPECT_EQ(y, r.y);
}

}  // namespace
}  // namespace fedsilo::test
#endif
