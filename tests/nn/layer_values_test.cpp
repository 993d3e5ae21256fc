// Hand-computed forward/backward values for each layer on tiny inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "grad_check.hpp"
#include "nn/conv2d.hpp"
#include "nn/dense.hpp"
#include "nn/dropout.hpp"
#include "nn/embedding.hpp"
#include "nn/lstm.hpp"
#include "nn/pool.hpp"

namespace fedsilo::test {
namespace {

// Runs forward then backward (dy given) on a layer with the given parameters.
struct Run {
  std::vector<double> y, dx, grads;
};

Run runLayer(LayerT<double>& layer, std::vector<double> params, const std::vector<double>& x, int batch,
             const std::vector<double>& dy, bool training = true) {
  Run r;
  r.grads.assign(params.size(), std::nan(""));
  layer.bind(params.data(), r.grads.data());
  layer.reserve(batch);
  const int inRows = static_cast<int>(x.size()) / batch;
  const int outRows = layer.outputShape().size();
  r.y.assign(static_cast<std::size_t>(outRows) * batch, std::nan(""));
  r.dx.assign(x.size(), std::nan(""));
  CMapT<double> xm(x.data(), inRows, batch);
  MapT<double> ym(r.y.data(), outRows, batch);
  layer.forward(xm, ym, training);
  if (!dy.empty()) {
    CMapT<double> yc(r.y.data(), outRows, batch), dym(dy.data(), outRows, batch);
    MapT<double> dxm(r.dx.data(), inRows, batch);
    layer.backward(xm, yc, dym, &dxm);
  }
  return r;
}

void expectVec(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "index " << i;
}

TEST(LayerValues, Dense2x2) {
  DenseT<double> d(2, 2);
  // W = [[1, 2], [3, 4]], b = (0.5, -1), x = (1, -1): y = (1 - 2 + 0.5, 3 - 4 - 1).
  const auto r = runLayer(d, {1, 2, 3, 4, 0.5, -1}, {1, -1}, 1, {1, 2});
  expectVec(r.y, {-0.5, -2});
  // dW = dy x^T = [[1, -1], [2, -2]], db = dy, dx = W^T dy = (1 + 6, 2 + 8).
  expectVec(r.grads, {1, -1, 2, -2, 1, 2});
  expectVec(r.dx, {7, 10});
}

TEST(LayerValues, Relu) {
  ReluT<double> relu(Shape{3, 1, 1});
  // Two samples (columns) of 3: x = (-2, 0, 0.25) and (3, -0.5, -0.0). y = max(0, x); dx = dy where
  // y > 0, else 0 (also at the kink x = 0).
  const auto r = runLayer(relu, {}, {-2, 0, 0.25, 3, -0.5, -0.0}, 2, {1, 2, 3, 4, 5, 6});
  expectVec(r.y, {0, 0, 0.25, 3, 0, 0});
  expectVec(r.dx, {0, 0, 3, 4, 0, 0});
}

TEST(LayerValues, DenseReluFused) {
  // The Model's fused Dense -> ReLU pass. W = [[1, 2], [3, 4]], b = (0.5, -1), x = (1, -0.5):
  // W x + b = (1 - 1 + 0.5, 3 - 2 - 1) = (0.5, 0), y = (0.5, 0). dy = (1, 2): dz = (1, 0) (the second
  // output sits at the kink), dW = dz x^T = [[1, -0.5], [0, 0]], db = dz, dx = W^T dz = (1, 2).
  DenseT<double> d(2, 2);
  std::vector<double> params{1, 2, 3, 4, 0.5, -1}, grads(6, std::nan(""));
  d.bind(params.data(), grads.data());
  d.reserve(1);
  const std::vector<double> x{1, -0.5}, dy{1, 2};
  std::vector<double> y(2, std::nan("")), dx(2, std::nan(""));
  CMapT<double> xm(x.data(), 2, 1), dym(dy.data(), 2, 1);
  MapT<double> ym(y.data(), 2, 1), dxm(dx.data(), 2, 1);
  d.forwardRelu(xm, ym);
  expectVec(y, {0.5, 0});
  CMapT<double> yc(y.data(), 2, 1);
  d.backwardRelu(xm, yc, dym, &dxm);
  expectVec(grads, {1, -0.5, 0, 0, 1, 0});
  expectVec(dx, {1, 2});
}

TEST(LayerValues, Conv2x2On3x3) {
  Conv2DT<double> conv(1, 3, 3, 1, 2, 1, 0);
  ASSERT_EQ(conv.outputShape(), (Shape{1, 2, 2}));
  // x = 1..9 row-major, w = [[1, 2], [3, 4]], b = 1: y(i,j) = x(i,j) + 2x(i,j+1) + 3x(i+1,j) + 4x(i+1,j+1) + 1.
  const auto r = runLayer(conv, {1, 2, 3, 4, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, 1, {1, 1, 1, 1});
  expectVec(r.y, {38, 48, 68, 78});
  // dW(kh,kw) = sum of x over the window positions; db = 4; dx = how often each pixel meets each weight.
  expectVec(r.grads, {12, 16, 24, 28, 4});
  expectVec(r.dx, {1, 3, 2, 4, 10, 6, 3, 7, 4});
}

TEST(LayerValues, Conv3x3PaddedAndStrided) {
  const std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<double> ones(10, 1.0);
  ones[9] = 0.0;  // bias
  // 3x3 box filter, pad 1: each output is the sum of the pixel's (clipped) neighbourhood.
  Conv2DT<double> same(1, 3, 3, 1, 3, 1, 1);
  expectVec(runLayer(same, ones, x, 1, {}).y, {12, 21, 16, 27, 45, 33, 24, 39, 28});
  // Stride 2 keeps the corners of that map.
  Conv2DT<double> strided(1, 3, 3, 1, 3, 2, 1);
  ASSERT_EQ(strided.outputShape(), (Shape{1, 2, 2}));
  const auto r = runLayer(strided, ones, x, 1, {1, 0, 0, 0});
  expectVec(r.y, {12, 16, 24, 28});
  // Only output (0,0) gets a gradient: its window covers pixels (0..1, 0..1).
  expectVec(r.dx, {1, 1, 0, 1, 1, 0, 0, 0, 0});
  expectVec(r.grads, {0, 0, 0, 0, 1, 2, 0, 4, 5, 1});
}

TEST(LayerValues, ConvTwoChannelsTwoSamples) {
  // 2 input channels, 2 output channels, 1x1 kernel: a per-pixel channel mix.
  Conv2DT<double> conv(2, 1, 2, 2, 1, 1, 0);
  // weight [out][in]: out0 = 1*c0 + 2*c1, out1 = -c0 + 0.5*c1; bias (0, 10).
  const std::vector<double> p = {1, 2, -1, 0.5, 0, 10};
  // sample 0: c0 = (1, 2), c1 = (3, 4); sample 1: c0 = (0, 1), c1 = (1, 0).
  const auto r = runLayer(conv, p, {1, 2, 3, 4, 0, 1, 1, 0}, 2, {1, 0, 0, 1, 0, 0, 0, 0});
  expectVec(r.y, {7, 10, 10.5, 10, 2, 1, 10.5, 9});
  // dy: sample 0 out0 pixel 0 and out1 pixel 1.  dW[o][i] = sum dy_o * x_i.
  expectVec(r.grads, {1, 3, 2, 4, 1, 1});
  expectVec(r.dx, {1, -1, 2, 0.5, 0, 0, 0, 0});
}

TEST(LayerValues, MaxPool2x2) {
  MaxPool2DT<double> pool(1, 4, 4);
  const std::vector<double> x = {1, 5, 2, 0,  //
                                 3, 4, 8, 1,  //
                                 0, 0, 1, 1,  //
                                 9, 2, 1, 3};
  const auto r = runLayer(pool, {}, x, 1, {1, 2, 3, 4});
  expectVec(r.y, {5, 8, 9, 3});
  expectVec(r.dx, {0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0, 4});
  // Floor output size and first-maximum tie break.
  MaxPool2DT<double> odd(1, 3, 3);
  ASSERT_EQ(odd.outputShape(), (Shape{1, 1, 1}));
  const auto t = runLayer(odd, {}, {2, 2, 0, 2, 2, 0, 7, 7, 7}, 1, {1});
  expectVec(t.y, {2});
  expectVec(t.dx, {1, 0, 0, 0, 0, 0, 0, 0, 0});
}

TEST(LayerValues, MaxPoolPropagatesNaN) {
  // A NaN takes its window (and the gradient); other windows of the row are unaffected.
  MaxPool2DT<double> pool(1, 2, 4);
  const double nan = std::nan("");
  const auto r = runLayer(pool, {}, {1, 2, 3, nan, 4, 0, 5, 6}, 1, {1, 2});
  EXPECT_EQ(r.y[0], 4.0);
  EXPECT_TRUE(std::isnan(r.y[1]));
  expectVec(r.dx, {0, 0, 0, 2, 1, 0, 0, 0});
  // Larger than one vector register along the row, NaN in a later window.
  MaxPool2DT<double> wide(1, 2, 40);
  std::vector<double> x(80);
  for (int i = 0; i < 80; ++i) x[i] = static_cast<double>((i * 37) % 23);
  x[2 * 15 + 40] = nan;
  const auto w = runLayer(wide, {}, x, 1, {});
  for (int o = 0; o < 20; ++o) {
    if (o == 15) {
      EXPECT_TRUE(std::isnan(w.y[o]));
      continue;
    }
    const double m = std::max(std::max(x[2 * o], x[2 * o + 1]), std::max(x[40 + 2 * o], x[40 + 2 * o + 1]));
    EXPECT_EQ(w.y[o], m) << o;
  }
}

TEST(LayerValues, MaxPoolFastPathMatchesGenericWindows) {
  // The 2x2/2 fast path against the definition on random data with many ties.
  MaxPool2DT<double> pool(3, 6, 10);
  std::vector<double> x(180);
  Rng rng(5, -1, -1, Purpose::Misc);
  for (auto& v : x) v = static_cast<double>(rng.below(3));  // values 0..2: ties everywhere
  std::vector<double> dy(45);
  for (std::size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<double>(i + 1);
  const auto r = runLayer(pool, {}, x, 1, dy);
  std::vector<double> wantDx(180, 0.0);
  for (int c = 0; c < 3; ++c)
    for (int oh = 0; oh < 3; ++oh)
      for (int ow = 0; ow < 5; ++ow) {
        int best = -1;
        for (int kh = 0; kh < 2; ++kh)
          for (int kw = 0; kw < 2; ++kw) {
            const int idx = c * 60 + (2 * oh + kh) * 10 + 2 * ow + kw;
            if (best < 0 || x[idx] > x[best]) best = idx;
          }
        const int o = (c * 3 + oh) * 5 + ow;
        EXPECT_EQ(r.y[o], x[best]);
        wantDx[best] += dy[o];
      }
  expectVec(r.dx, wantDx, 0.0);
}

TEST(LayerValues, GlobalAvgPool) {
  GlobalAvgPoolT<double> gap(2, 2, 2);
  const auto r = runLayer(gap, {}, {1, 2, 3, 4, 5, 6, 7, 8}, 1, {4, 8});
  expectVec(r.y, {2.5, 6.5});
  expectVec(r.dx, {1, 1, 1, 1, 2, 2, 2, 2});
}

TEST(LayerValues, Flatten) {
  FlattenT<double> f(Shape{2, 1, 2});
  EXPECT_EQ(f.outputShape(), (Shape{4, 1, 1}));
  const auto r = runLayer(f, {}, {1, 2, 3, 4}, 1, {5, 6, 7, 8});
  expectVec(r.y, {1, 2, 3, 4});
  expectVec(r.dx, {5, 6, 7, 8});
}

// The mask is the layer's stream drawn element by element: value i is dropped exactly when the i-th
// Rng::uniform() of the stream keyed (seed, client, round, Dropout, layer << 32 | batch counter) is below p
// (dropout.cpp compares the integer draws, which must be the same decision), at a rate p = 0.3 whose
// threshold 0.3 * 2^53 is not an integer.
TEST(LayerValues, DropoutDropsWhereTheUniformDrawIsBelowP) {
  const int n = 600, batch = 3;
  const double p = 0.3;
  DropoutT<float> drop(Shape{n, 1, 1}, p);
  drop.reserve(batch);
  const std::vector<float> x(static_cast<std::size_t>(n) * batch, 1.0f);
  std::vector<float> y(x.size());
  CMapT<float> xm(x.data(), n, batch);
  MapT<float> ym(y.data(), n, batch);
  drop.setRandomContext(7, 1, 2, 5);
  drop.forward(xm, ym, true);
  drop.forward(xm, ym, true);  // the layer's second batch
  Rng rng(7, 1, 2, Purpose::Dropout, (std::uint64_t(5) << 32) | 1u);
  const float kept = static_cast<float>(1.0 / (1.0 - p));
  for (std::size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], rng.uniform() < p ? 0.0f : kept) << i;
}

TEST(LayerValues, DropoutMaskSemantics) {
  const int n = 1000, batch = 4;
  DropoutT<double> drop(Shape{n, 1, 1}, 0.5);
  drop.reserve(batch);
  const std::vector<double> x = randomVector(n * batch, 3, 0.5, 1.0);
  std::vector<double> y1(x.size()), y2(x.size()), y3(x.size()), dx(x.size());
  CMapT<double> xm(x.data(), n, batch);
  MapT<double> m1(y1.data(), n, batch), m2(y2.data(), n, batch), m3(y3.data(), n, batch);
  drop.setRandomContext(1, 2, 3, 4);
  drop.forward(xm, m1, true);
  drop.forward(xm, m2, true);  // next batch: a different mask
  drop.setRandomContext(1, 2, 3, 4);
  drop.forward(xm, m3, true);  // replay of the first
  int zeros = 0, same12 = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_TRUE(y1[i] == 0.0 || y1[i] == 2.0 * x[i]) << i;  // inverted dropout: kept values scaled by 1/(1-p)
    zeros += y1[i] == 0.0;
    same12 += y1[i] == y2[i];
    EXPECT_EQ(y1[i], y3[i]);
  }
  EXPECT_NEAR(zeros, 2000, 200);
  EXPECT_LT(same12, 2400);  // independent masks agree on ~half the entries
  // Other keys give other masks.
  drop.setRandomContext(1, 5, 3, 4);
  drop.forward(xm, m2, true);
  EXPECT_NE(y1, y2);
  // backward multiplies by the same mask.
  drop.setRandomContext(1, 2, 3, 4);
  drop.forward(xm, m1, true);
  MapT<double> dxm(dx.data(), n, batch);
  drop.backward(xm, CMapT<double>(y1.data(), n, batch), xm, &dxm);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(dx[i], y1[i]);
  // Evaluation: identity.
  drop.forward(xm, m2, false);
  EXPECT_EQ(y2, x);
  EXPECT_THROW(DropoutT<double>(Shape{1, 1, 1}, 1.0), ConfigError);
}

TEST(LayerValues, EmbeddingLookupAndScatter) {
  EmbeddingT<double> emb(3, 2, 3);
  EXPECT_EQ(emb.outputShape().size(), 6);
  const std::vector<double> w = {1, 2, 3, 4, 5, 6};  // rows: token 0, 1, 2
  const auto r = runLayer(emb, w, {2, 0, 2}, 1, {1, 2, 3, 4, 5, 6});
  expectVec(r.y, {5, 6, 1, 2, 5, 6});
  // Token 2 appears at steps 0 and 2: its row accumulates both; token 1 is unused.
  expectVec(r.grads, {3, 4, 0, 0, 6, 8});
  expectVec(r.dx, {0, 0, 0});
}

TEST(LayerValues, EmbeddingRejectsBadTokens) {
  for (double bad : {3.0, -1.0, 1.5, std::nan("")}) {
    EmbeddingT<double> emb(3, 2, 2);
    std::vector<double> w(6, 0.0), g(6);
    emb.bind(w.data(), g.data());
    emb.reserve(1);
    std::vector<double> x = {0, bad}, y(4);
    CMapT<double> xm(x.data(), 2, 1);
    MapT<double> ym(y.data(), 4, 1);
    EXPECT_THROW(emb.forward(xm, ym, true), DataError) << bad;
  }
}

TEST(LayerValues, EmbeddingInitIsStandardNormal) {
  EmbeddingT<double> emb(100, 50, 1);
  std::vector<double> w(5000);
  Rng rng(1, -1, -1, Purpose::Init);
  emb.initParams(rng, w.data());
  double mean = 0, sq = 0;
  for (double v : w) mean += v / w.size();
  for (double v : w) sq += (v - mean) * (v - mean) / w.size();
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(sq, 1.0, 0.06);
}

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

TEST(LayerValues, LstmOnlyCellInput) {
  // in = 1, hidden = 1, 2 steps; only the g gate sees x (w_ih = (0, 0, 1, 0)), everything else 0:
  // i = f = o = 1/2, g_t = tanh(x_t), c_t = c_{t-1}/2 + tanh(x_t)/2, h_t = tanh(c_t)/2.
  LstmT<double> lstm(1, 1, 2, true);
  std::vector<double> p(4 + 4 + 4 + 4, 0.0);
  p[2] = 1.0;
  const auto r = runLayer(lstm, p, {1.0, 2.0}, 1, {});
  const double c0 = 0.5 * std::tanh(1.0), c1 = 0.5 * c0 + 0.5 * std::tanh(2.0);
  expectVec(r.y, {0.5 * std::tanh(c0), 0.5 * std::tanh(c1)}, 1e-15);
}

TEST(LayerValues, LstmMatchesScalarReference) {
  // in = 1, hidden = 1, 3 steps; gate rows in PyTorch order i, f, g, o.
  const double wih[4] = {0.5, -0.5, 1.0, 0.25}, whh[4] = {0.1, 0.2, -0.3, 0.4};
  const double bih[4] = {0.1, 0.0, 0.05, 0.0}, bhh[4] = {0.0, 0.2, 0.0, -0.1};
  std::vector<double> p;
  for (const double* t : {wih, whh, bih, bhh}) p.insert(p.end(), t, t + 4);
  const std::vector<double> x = {0.3, -1.2, 0.7};
  double h = 0, c = 0;
  std::vector<double> hs;
  for (double xt : x) {
    double z[4];
    for (int k = 0; k < 4; ++k) z[k] = wih[k] * xt + bih[k] + whh[k] * h + bhh[k];
    const double i = sigmoid(z[0]), f = sigmoid(z[1]), g = std::tanh(z[2]), o = sigmoid(z[3]);
    c = f * c + i * g;
    h = o * std::tanh(c);
    hs.push_back(h);
  }
  LstmT<double> seq(1, 1, 3, true), last(1, 1, 3, false);
  expectVec(runLayer(seq, p, x, 1, {}).y, hs, 1e-15);
  expectVec(runLayer(last, p, x, 1, {}).y, {hs.back()}, 1e-15);
  EXPECT_EQ(last.outputShape(), (Shape{1, 1, 1}));
  EXPECT_EQ(seq.outputShape().size(), 3);
}

TEST(LayerValues, LstmInitBoundIsOneOverSqrtHidden) {
  LstmT<double> lstm(5, 16, 2, false);
  const auto specs = lstm.paramSpecs();
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_EQ(specs[0].name, "w_ih");
  EXPECT_EQ(specs[0].size, 64 * 5);
  EXPECT_EQ(specs[1].size, 64 * 16);
  EXPECT_TRUE(specs[2].isBias && specs[3].isBias);
  Rng rng(2, -1, -1, Purpose::Init);
  LayerParams lp(lstm, rng);
  double mx = 0;
  for (double v : lp.params) mx = std::max(mx, std::abs(v));
  EXPECT_LE(mx, 0.25);
  EXPECT_GT(mx, 0.24);
}

}  // namespace
}  // namespace fedsilo::test
