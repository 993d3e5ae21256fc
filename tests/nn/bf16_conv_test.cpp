// The bf16 convolution path (train.precision = bf16, nn/conv2d_bf16.*) against a long-double reference
// of the same convolution, forward, weight gradient and input gradient, within bounds from bf16's 8-bit
// significand and the length K of each sum (bf16_check.hpp). That the rounding really happens is
// checked too: somewhere the error exceeds what fp32 products allow.
// Geometries with odd channel counts, channels that are not a multiple of 16, a single input channel
// (taps paired) at strides 1 and 2, stride 2 with an odd number of output columns, and batches of
// several chunks (with and without padding).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "bf16_check.hpp"
#include "conv_reference.hpp"
#include "core/error.hpp"
#include "isa_scope.hpp"
#include "nn/bf16_kernels.hpp"
#include "nn/conv2d.hpp"
#include "nn/kernel_table.hpp"

namespace fedsilo::test {
namespace {

struct Outputs {
  std::vector<float> y, dw, db, dx;
};

// relu: the layer with its fused ReLU (forwardRelu, backwardRelu).
Outputs runLayer(const Geometry& g, const std::vector<float>& params, const std::vector<float>& x,
                 const std::vector<float>& dy, int batch, bool relu = false) {
  Bf16Scope bf16;
  Conv2DT<float> conv(g.inC, g.h, g.w, g.outC, g.k, g.stride, g.pad);
  std::vector<float> w = params, grads(params.size(), -7.0f);
  Outputs o{std::vector<float>(g.outSize() * batch), {}, {}, std::vector<float>(g.inSize() * batch, -7.0f)};
  conv.bind(w.data(), grads.data());
  conv.reserve(batch);
  CMapT<float> xm(x.data(), g.inSize(), batch);
  MapT<float> ym(o.y.data(), g.outSize(), batch);
  MapT<float> dxm(o.dx.data(), g.inSize(), batch);
  const CMapT<float> yc(o.y.data(), g.outSize(), batch), dyc(dy.data(), g.outSize(), batch);
  if (relu) {
    conv.forwardRelu(xm, ym);
    conv.backwardRelu(xm, yc, dyc, &dxm);
  } else {
    conv.forward(xm, ym, true);
    conv.backward(xm, yc, dyc, &dxm);
  }
  o.dw.assign(grads.begin(), grads.begin() + g.weights());
  o.db.assign(grads.begin() + g.weights(), grads.end());
  return o;
}

// relu: the layer runs with its fused ReLU; the reference then takes dL/dz = y > 0 ? dy : 0 from the
// layer's own y (and max(0, .) of its z).
void checkGeometry(const Geometry& g, int batch, bool bf16Operands, std::uint64_t seed, bool relu = false) {
  const auto params = randomFloats(g.weights() + g.outC, seed, bf16Operands);
  const auto x = randomFloats(g.inSize() * batch, seed + 1, bf16Operands);
  auto dy = randomFloats(g.outSize() * batch, seed + 2, bf16Operands);
  const Outputs got = runLayer(g, params, x, dy, batch, relu);
  if (relu)
    for (std::size_t i = 0; i < dy.size(); ++i) dy[i] = got.y[i] > 0.0f ? dy[i] : 0.0f;
  ConvReference ref = referenceConv(g, params, x, dy, batch);
  if (relu)
    for (auto& v : ref.y) v = std::max(v, 0.0L);
  // fp32 operands: half the worst case of bf16_check.hpp, 2^-8 (1 + 2^-8) S, which these sums of many
  // random terms stay within (their rounding errors partly cancel; the dense test checks the worst case).
  const double u = std::ldexp(1.0, -24);
  const double product = bf16Operands ? 0.0 : std::ldexp(1.0, -8) * (1 + std::ldexp(1.0, -8));
  const int kFwd = g.inC * g.k * g.k, kW = batch * g.oh() * g.ow(), kDx = g.outC * g.k * g.k;
  const double worst = std::max({worstRatio("y", got.y, ref.y, ref.ySum, kFwd, u, product),
                                 worstRatio("dw", got.dw, ref.dw, ref.dwSum, kW, u, product),
                                 worstRatio("dx", got.dx, ref.dx, ref.dxSum, kDx, u, product)});
  worstRatio("db", got.db, ref.db, ref.dbSum, kW, u, 0.0);  // fp32 sums of fp32 values
  // fp32 operands: the bf16 rounding shows (fp32 products would stay within about K u).
  if (!bf16Operands) {
    EXPECT_GT(worst, kBf16Shows) << "no sign of bf16 rounding";
  }
}

const std::vector<std::pair<Geometry, int>>& cases() {
  static const std::vector<std::pair<Geometry, int>> c = {
      {{1, 12, 12, 32, 5, 1, 2}, 3},    // one input channel (taps paired), "same" padding
      {{1, 13, 10, 16, 4, 2, 1}, 4},    // one input channel, even k (no zero tap), stride 2
      {{1, 9, 9, 8, 3, 1, 2}, 2},       // one input channel, padding k - 1
      {{3, 11, 9, 20, 3, 2, 1}, 5},     // odd channels, 20 outputs, stride 2, odd output width
      {{32, 7, 7, 64, 5, 1, 2}, 2},     // cnn_mcmahan's second layer, small image
      {{5, 16, 16, 17, 3, 1, 0}, 40},   // several chunks of samples, no padding, odd ow
      {{3, 11, 9, 20, 3, 2, 1}, 40},    // several chunks at stride 2 with padding
  };
  return c;
}

TEST(Bf16Conv, ExactProductsAccumulateInFp32) {
  if (skipWithoutBf16()) GTEST_SKIP() << bf16Missing();
  std::uint64_t seed = 11;
  for (const auto& [g, batch] : cases()) {
    SCOPED_TRACE(::testing::Message() << g.inC << "x" << g.h << "x" << g.w << " -> " << g.outC << " k" << g.k << " s"
                                      << g.stride << " p" << g.pad << " batch " << batch);
    checkGeometry(g, batch, true, seed += 10);
  }
}

TEST(Bf16Conv, Fp32OperandsWithinBf16Rounding) {
  if (skipWithoutBf16()) GTEST_SKIP() << bf16Missing();
  std::uint64_t seed = 511;
  for (const auto& [g, batch] : cases()) {
    SCOPED_TRACE(::testing::Message() << g.inC << "x" << g.h << "x" << g.w << " -> " << g.outC << " batch " << batch);
    checkGeometry(g, batch, false, seed += 10);
  }
}

TEST(Bf16Conv, FusedReluWithinBf16Rounding) {
  if (skipWithoutBf16()) GTEST_SKIP() << bf16Missing();
  std::uint64_t seed = 911;
  for (const auto& [g, batch] : cases()) {
    SCOPED_TRACE(::testing::Message() << g.inC << "x" << g.h << "x" << g.w << " -> " << g.outC << " batch " << batch);
    checkGeometry(g, batch, false, seed += 10, true);
  }
}

TEST(Bf16Conv, SameBitsWhateverTheChunkAndRepeatable) {
  if (skipWithoutBf16()) GTEST_SKIP() << bf16Missing();
  // A batch of 40 runs in several chunks; its first 3 samples alone in one: per-sample outputs and
  // the input gradient are the same bits, and a second run repeats the first.
  const Geometry g{5, 16, 16, 17, 3, 1, 0};
  const auto params = randomFloats(g.weights() + g.outC, 3, false);
  const auto x = randomFloats(g.inSize() * 40, 4, false), dy = randomFloats(g.outSize() * 40, 5, false);
  const Outputs all = runLayer(g, params, x, dy, 40), again = runLayer(g, params, x, dy, 40);
  EXPECT_EQ(all.y, again.y);
  EXPECT_EQ(all.dw, again.dw);
  EXPECT_EQ(all.dx, again.dx);
  const Outputs few = runLayer(g, params, x, dy, 3);
  for (std::size_t i = 0; i < few.y.size(); ++i) ASSERT_EQ(few.y[i], all.y[i]) << i;
  for (std::size_t i = 0; i < few.dx.size(); ++i) ASSERT_EQ(few.dx[i], all.dx[i]) << i;
}

TEST(Bf16Conv, GradientPairsInOnePassAreTheTwoPassBits) {
  // The weight gradient's dL/dz pairs straight from the planes (planesToPairs, even output rows) give
  // the bits of the rows of channels (planesToRows) paired by pairRows, and the bias gradient the bits
  // of the in-order sum over those rows; with and without the ReLU's mask, channels and positions
  // that are and are not multiples of 16.
  if (skipWithoutBf16()) GTEST_SKIP() << bf16Missing();
  IsaScope avx512(Isa::Avx512);
  const auto& kb = kernels::bf16ConvKernels();
  struct Case {
    int nb, C;
    Index P;
  };
  for (const Case c : {Case{3, 17, 196}, Case{2, 64, 784}, Case{1, 32, 14}}) {
    const int ldd = (c.C + 15) / 16 * 16;
    const Index perSample = c.C * c.P + 5;  // a sample stride beyond the planes, as a chunk's
    const auto src = randomFloats(perSample * c.nb, 17 + c.C, false);
    const auto mask = randomFloats(perSample * c.nb, 19 + c.C, false);
    for (bool relu : {false, true}) {
      SCOPED_TRACE(::testing::Message() << c.nb << " x " << c.C << " x " << c.P << (relu ? " relu" : ""));
      const float* m = relu ? mask.data() : nullptr;
      std::vector<float> rows(c.nb * c.P * ldd), dbWant(c.C, 0.5f), dbGot(c.C, 0.5f);
      std::vector<std::uint32_t> want(c.nb * c.P / 2 * ldd, 0u), got(want.size(), 0u);
      kernels::active().conv.planesToRows(src.data(), m, c.nb, c.C, c.P, perSample, rows.data(), ldd);
      for (Index i = 0; i < c.nb * c.P; ++i)
        for (int ch = 0; ch < c.C; ++ch) dbWant[ch] += rows[i * ldd + ch];
      for (Index j = 0; j < c.nb * c.P / 2; ++j)
        kb.pairRows(&rows[2 * j * ldd], nullptr, &rows[(2 * j + 1) * ldd], nullptr, c.C, &want[j * ldd]);
      kb.planesToPairs(src.data(), m, c.nb, c.C, c.P, perSample, got.data(), ldd, dbGot.data());
      EXPECT_EQ(got, want);
      EXPECT_EQ(0, std::memcmp(dbGot.data(), dbWant.data(), sizeof(float) * c.C));
    }
  }
}

TEST(Bf16Conv, ShiftedPairsInOnePassAreTheTwoPassBits) {
  // The rows of (xpad[r][j], xpad[r][j + shift]) words straight from the input rows (pairShiftedRows)
  // give the bits of pairRows over a zero-bordered copy of each row; rows shorter and longer than a
  // vector, a padding wider than the shift and none.
  if (skipWithoutBf16()) GTEST_SKIP() << bf16Missing();
  const auto& kb = kernels::bf16ConvKernels();
  const int h = 3;
  for (int w : {5, 14, 16, 28, 37})
    for (int pad : {0, 1, 2, 4})
      for (int shift : {1, 2}) {
        SCOPED_TRACE(::testing::Message() << "w " << w << " pad " << pad << " shift " << shift);
        const int cols = w + 2 * pad;
        const auto src = randomFloats(static_cast<std::size_t>(h) * w, 23 + w + pad, false);
        std::vector<std::uint32_t> want(static_cast<std::size_t>(h) * cols, 7u), got(want.size(), 7u);
        std::vector<float> row(static_cast<std::size_t>(cols + shift), 0.0f);
        for (int r = 0; r < h; ++r) {
          std::copy(src.begin() + r * w, src.begin() + (r + 1) * w, row.begin() + pad);
          kb.pairRows(row.data(), nullptr, row.data() + shift, nullptr, cols, want.data() + r * cols);
        }
        kb.pairShiftedRows(src.data(), h, w, pad, shift, cols, got.data());
        EXPECT_EQ(got, want);
      }
}

TEST(Bf16Conv, RefusedWithoutTheAvx512Set) {
  // The avx2 kernel set stands for a CPU without AVX512-BF16 (FEDSILO_ISA=avx2 asks for it).
  if (cpuIsa() == Isa::Generic) GTEST_SKIP() << "no avx2 set on this CPU";
  IsaScope avx2(Isa::Avx2);
  EXPECT_FALSE(bf16Missing().empty());
  try {
    selectBf16(true);
    ADD_FAILURE() << "bf16 accepted with the avx2 kernel set";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("train.precision = bf16: "), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line";
  }
  EXPECT_FALSE(bf16Active());
}

}  // namespace
}  // namespace fedsilo::test
