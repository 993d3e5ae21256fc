// Conv2D against the convolution's definition in long double (conv_reference.hpp): forward, weight, bias
// and input gradients, in float (on every kernel set this CPU runs) and double, on random geometries,
// with one and several chunks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "conv_reference.hpp"
#include "core/error.hpp"
#include "grad_check.hpp"
#include "isa_scope.hpp"
#include "nn/conv2d.hpp"
#include "nn/kernel_table.hpp"

namespace fedsilo::test {
namespace {

// fn() once on every kernel set this CPU runs.
template <typename Fn>
void onEveryKernelSet(Fn fn) {
  for (Isa isa : runnableIsas()) {
    SCOPED_TRACE(isaName(isa));
    IsaScope scope(isa);
    fn();
  }
}

// A geometry's random data and its long-double reference results, which depend on neither the
// kernel set nor the chunk size: computed once, compared with every set's (onEveryKernelSet).
struct NaiveCase {
  Geometry g;
  int batch;
  std::vector<double> wd, xd, dyd;
  ConvReference ref;
};

NaiveCase naiveCase(const Geometry& g, int batch, std::uint64_t seed) {
  NaiveCase c{g,
              batch,
              randomVector(static_cast<std::size_t>(g.outC) * g.inC * g.k * g.k + g.outC, seed),
              randomVector(static_cast<std::size_t>(g.inC) * g.h * g.w * batch, seed + 1),
              randomVector(static_cast<std::size_t>(g.outC) * g.oh() * g.ow() * batch, seed + 2),
              {}};
  c.ref = referenceConv(g, c.wd, c.xd, c.dyd, batch);
  return c;
}

template <typename T>
void compareWithNaive(const NaiveCase& c, Index chunkElems, double tol) {
  const Geometry& g = c.g;
  const int batch = c.batch;
  Conv2DT<T> conv(g.inC, g.h, g.w, g.outC, g.k, g.stride, g.pad);
  ASSERT_EQ(conv.outputShape(), (Shape{g.outC, g.oh(), g.ow()}));
  if (chunkElems > 0) conv.setMaxChunkElems(chunkElems);
  const std::size_t nw = static_cast<std::size_t>(g.outC) * g.inC * g.k * g.k + g.outC;
  const std::size_t inSize = static_cast<std::size_t>(g.inC) * g.h * g.w;
  const std::size_t outSize = static_cast<std::size_t>(g.outC) * g.oh() * g.ow();
  const std::vector<double>&wd = c.wd, &xd = c.xd, &dyd = c.dyd;
  const ConvReference& ref = c.ref;

  std::vector<T> w(wd.begin(), wd.end()), x(xd.begin(), xd.end()), dy(dyd.begin(), dyd.end());
  std::vector<T> grads(nw, T(-7)), y(outSize * batch), dx(inSize * batch, T(-7));
  conv.bind(w.data(), grads.data());
  conv.reserve(batch);
  CMapT<T> xm(x.data(), inSize, batch);
  MapT<T> ym(y.data(), outSize, batch);
  conv.forward(xm, ym, true);
  MapT<T> dxm(dx.data(), inSize, batch);
  conv.backward(xm, CMapT<T>(y.data(), outSize, batch), CMapT<T>(dy.data(), outSize, batch), &dxm);

  auto check = [&](const char* what, const T* got, const long double* want, std::size_t n) {
    double worst = 0;
    std::size_t at = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double e = std::abs(static_cast<double>(got[i] - static_cast<T>(want[i]))) /
                       std::max(1.0, std::abs(static_cast<double>(want[i])));
      if (e > worst) worst = e, at = i;
    }
    EXPECT_LT(worst, tol) << what << " at " << at << ": " << static_cast<double>(got[at]) << " vs "
                          << static_cast<double>(want[at]);
  };
  check("y", y.data(), ref.y.data(), ref.y.size());
  check("dweight", grads.data(), ref.dw.data(), ref.dw.size());
  check("dbias", grads.data() + ref.dw.size(), ref.db.data(), ref.db.size());
  check("dx", dx.data(), ref.dx.data(), ref.dx.size());

  // Backward without dx (a model's first layer) gives the same parameter gradients.
  std::vector<T> grads2(nw, T(-7));
  conv.bind(w.data(), grads2.data());
  conv.forward(xm, ym, true);
  conv.backward(xm, CMapT<T>(y.data(), outSize, batch), CMapT<T>(dy.data(), outSize, batch), nullptr);
  for (std::size_t i = 0; i < nw; ++i) EXPECT_EQ(grads2[i], grads[i]) << i;
}

template <typename T>
void compareWithNaive(const Geometry& g, int batch, Index chunkElems, std::uint64_t seed, double tol) {
  compareWithNaive<T>(naiveCase(g, batch, seed), chunkElems, tol);
}

std::vector<Geometry> randomGeometries(int count, std::uint64_t seed) {
  std::vector<Geometry> out;
  Rng rng(seed, -1, -1, Purpose::Misc);
  while (static_cast<int>(out.size()) < count) {
    Geometry g{1 + static_cast<int>(rng.below(4)),  1 + static_cast<int>(rng.below(12)),
               1 + static_cast<int>(rng.below(12)), 1 + static_cast<int>(rng.below(6)),
               1 + static_cast<int>(rng.below(5)),  1 + static_cast<int>(rng.below(3)),
               static_cast<int>(rng.below(3))};
    if (g.h + 2 * g.pad >= g.k && g.w + 2 * g.pad >= g.k) out.push_back(g);
  }
  return out;
}

std::string describe(const Geometry& g) {
  return fmt("in ", g.inC, "x", g.h, "x", g.w, " out ", g.outC, " k", g.k, " s", g.stride, " p", g.pad);
}

TEST(Conv2DNaive, RandomShapesDouble) {
  std::uint64_t seed = 100;
  for (const auto& g : randomGeometries(40, 7)) {
    SCOPED_TRACE(describe(g));
    compareWithNaive<double>(g, 3, 0, seed += 3, 1e-12);
  }
}

TEST(Conv2DNaive, RandomShapesFloat) {
  for (Isa isa : runnableIsas()) {
    SCOPED_TRACE(isaName(isa));
    IsaScope scope(isa);
    std::uint64_t seed = 200;
    for (const auto& g : randomGeometries(25, 8)) {
      SCOPED_TRACE(describe(g));
      compareWithNaive<float>(g, 4, 0, seed += 3, 2e-5);
    }
  }
}

TEST(Conv2DNaive, SeveralChunks) {
  std::uint64_t seed = 300;
  for (const auto& g : randomGeometries(10, 9)) {
    SCOPED_TRACE(describe(g));
    const Index perSample = static_cast<Index>(g.oh()) * g.ow() * g.inC * g.k * g.k;
    // 2 samples per chunk over a batch of 5: chunks of 2, 2, 1 (balanced to 2,2,1).
    compareWithNaive<double>(g, 5, 2 * perSample, seed += 3, 1e-12);
    compareWithNaive<float>(g, 5, perSample, seed += 3, 2e-5);
  }
}

// A shape to compare in float on every kernel set: its reference is computed once (naiveCase).
struct NaiveShape {
  Geometry g;
  int batch;
  Index chunkElems;
  std::uint64_t seed;
  double tol;
};

void compareOnEveryKernelSet(const std::vector<NaiveShape>& shapes) {
  std::vector<NaiveCase> cases;
  for (const NaiveShape& s : shapes) cases.push_back(naiveCase(s.g, s.batch, s.seed));
  onEveryKernelSet([&] {
    for (std::size_t i = 0; i < shapes.size(); ++i)
      compareWithNaive<float>(cases[i], shapes[i].chunkElems, shapes[i].tol);
  });
}

TEST(Conv2DNaive, McMahanShapes) {
  // The W2 layers at a small batch: 1x28x28 -> 32 (k5 p2), 32x14x14 -> 64 (k5 p2); and PLayer-FL's
  // third layer, 128x7x7 -> 256, on every kernel set.
  compareOnEveryKernelSet({{Geometry{1, 28, 28, 32, 5, 1, 2}, 2, 0, 400, 2e-5},
                           {Geometry{32, 14, 14, 64, 5, 1, 2}, 2, 0, 401, 5e-5},
                           {Geometry{128, 7, 7, 256, 5, 1, 2}, 2, 0, 402, 1e-4}});
}

// 3x3 kernels padded by 2 (cnn_playerfl_cifar's layers, smaller): with at least 64 taps the GEMMs run on
// positions reordered by their kernel spans and leave out the border taps (conv2d_direct.cpp: orderBySpans),
// forward and input gradient, also at stride 2 and over several chunks, on every kernel set.
TEST(Conv2DNaive, ThreeByThreePaddedByTwoShapes) {
  compareOnEveryKernelSet({{Geometry{16, 9, 9, 32, 3, 1, 2}, 3, 0, 410, 5e-5},
                           {Geometry{64, 5, 6, 48, 3, 1, 2}, 2, 0, 411, 1e-4},
                           {Geometry{16, 9, 9, 32, 3, 2, 2}, 3, 0, 412, 5e-5},
                           {Geometry{32, 7, 7, 16, 3, 1, 2}, 5, 2 * 81 * 32 * 9, 413, 5e-5}});
}

TEST(Conv2D, ChunkSizesAreBalancedAndBounded) {
  Conv2DT<float> conv(32, 14, 14, 64, 5, 1, 2);  // 196 * 800 values of im2col per sample
  EXPECT_EQ(conv.chunkSamples(2), 2);
  EXPECT_EQ(conv.chunkSamples(1), 1);
  const int c = conv.chunkSamples(1000);
  EXPECT_GE(c, 1);
  EXPECT_LE(static_cast<Index>(c) * 196 * 800, Conv2DT<float>::kChunkElems);
  const int chunks = (1000 + c - 1) / c;
  EXPECT_LT(static_cast<long>(chunks) * c - 1000, chunks);  // balanced: the last chunk is not a sliver
}

TEST(Conv2D, RejectsImpossibleGeometry) {
  EXPECT_THROW(Conv2DT<float>(1, 3, 3, 1, 5, 1, 0), ConfigError);
  EXPECT_THROW(Conv2DT<float>(0, 3, 3, 1, 1, 1, 0), ConfigError);
  EXPECT_THROW(Conv2DT<float>(1, 3, 3, 1, 3, 0, 0), ConfigError);
}

TEST(Conv2D, ParamLayoutAndFanIn) {
  Conv2DT<float> conv(3, 8, 8, 4, 5, 1, 2);
  const auto specs = conv.paramSpecs();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "weight");
  EXPECT_EQ(specs[0].size, 4 * 3 * 5 * 5);
  EXPECT_EQ(specs[0].fanIn, 75);
  EXPECT_EQ(specs[1].name, "bias");
  EXPECT_EQ(specs[1].size, 4);
  EXPECT_TRUE(specs[1].isBias);
}

// The gather GEMM with the per-position kernel-row and kernel-column spans leaves out the taps that read only
// zero padding: the result must be the bits of the full product (the products left out are +-0), on every
// kernel set, for tiles that straddle output rows and a chunk of two samples (7x7 images padded by 2, 5x5 taps).
TEST(ConvGatherGemm, LeavingOutPaddingRowsKeepsTheBits) {
  constexpr int kSamples = 2, kSide = 7, kPad = 2, kK = 5, kIn = 3, kOut = 40, kLd = 48;
  constexpr int kPadded = kSide + 2 * kPad, kPlane = kPadded * kPadded, kTaps = kIn * kK * kK;
  std::vector<float> x(static_cast<std::size_t>(kSamples) * kIn * kPlane, 0.0f);
  const auto values = randomVector(x.size(), 900);
  std::vector<std::int32_t> rowBase, tap;
  std::vector<std::uint8_t> span;
  for (int b = 0; b < kSamples; ++b)
    for (int c = 0; c < kIn; ++c)
      for (int r = 0; r < kSide; ++r)
        for (int col = 0; col < kSide; ++col) {
          const std::size_t at = (static_cast<std::size_t>(b) * kIn + c) * kPlane + (r + kPad) * kPadded + col + kPad;
          x[at] = static_cast<float>(values[at]);
        }
  for (int b = 0; b < kSamples; ++b)
    for (int r = 0; r < kSide; ++r)
      for (int col = 0; col < kSide; ++col) {
        rowBase.push_back(b * kIn * kPlane + r * kPadded + col);
        span.push_back(static_cast<std::uint8_t>(std::max(0, kPad - r)));           // the first kernel row inside
        span.push_back(static_cast<std::uint8_t>(std::min(kK, kPad + kSide - r)));  // one past the last
        span.push_back(static_cast<std::uint8_t>(std::max(0, kPad - col)));         // the same for the columns
        span.push_back(static_cast<std::uint8_t>(std::min(kK, kPad + kSide - col)));
      }
  for (int k = 0; k < kTaps; ++k) tap.push_back((k / 25) * kPlane + (k % 25 / 5) * kPadded + k % 5);
  std::vector<float> wt(static_cast<std::size_t>(kTaps) * kLd);
  const auto w = randomVector(wt.size(), 901);
  std::transform(w.begin(), w.end(), wt.begin(), [](double d) { return static_cast<float>(d); });
  const Index n = static_cast<Index>(rowBase.size());
  for (Isa isa : runnableIsas()) {
    SCOPED_TRACE(isaName(isa));
    IsaScope scope(isa);
    std::vector<float> full(static_cast<std::size_t>(n) * kLd, -7.0f), skipped(full.size(), -7.0f);
    const auto& kc = kernels::active().conv;
    kc.gemm(x.data(), rowBase.data(), n, tap.data(), kTaps, wt.data(), kLd, kOut, full.data(), kLd, nullptr, kK);
    kc.gemm(x.data(), rowBase.data(), n, tap.data(), kTaps, wt.data(), kLd, kOut, skipped.data(), kLd, span.data(), kK);
    for (Index i = 0; i < n; ++i)
      for (int c = 0; c < kOut; ++c) {
        const std::size_t at = static_cast<std::size_t>(i) * kLd + c;
        ASSERT_EQ(std::memcmp(&full[at], &skipped[at], sizeof(float)), 0) << "position " << i << " channel " << c;
      }
  }
}

}  // namespace
}  // namespace fedsilo::test
