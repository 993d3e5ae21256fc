// The bf16 dense path (train.precision = bf16, nn/kernels_bf16_dense.cpp through DenseT<float>) against a
// long-double reference: forward (K terms per output), weight gradient (B terms), input gradient (N
// terms) and bias gradient, within the bounds of bf16_check.hpp; with fp32 operands the bf16 rounding
// must show. Shapes with odd K, N and batch (each pairs its last value with 0), widths that are not
// multiples of 16 or of the tiles, chunks of at most 16 samples (half tiles) and several chunks. The
// fused SGD step must equal the weight gradient applied with one rounding, and a sample's output must
// not depend on the batch it is in.
#include <gtest/gtest.h>

#include <cmath>

#include "bf16_check.hpp"
#include "nn/dense.hpp"

namespace fedsilo::test {
namespace {

struct Shape3 {
  int K, N, B;
};

// y = W x + b, dW, db, dx for dL/dy = dy, and the sums of |terms| (S) of each element.
struct Reference {
  std::vector<long double> y, ySum, dw, dwSum, db, dbSum, dx, dxSum;
};

Reference reference(const Shape3& s, const std::vector<float>& p, const std::vector<float>& x,
                    const std::vector<float>& dy) {
  const std::size_t K = s.K, N = s.N, B = s.B;
  Reference r{std::vector<long double>(N * B), std::vector<long double>(N * B), std::vector<long double>(N * K),
              std::vector<long double>(N * K), std::vector<long double>(N),     std::vector<long double>(N),
              std::vector<long double>(K * B), std::vector<long double>(K * B)};
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t o = 0; o < N; ++o) {
      const long double bias = p[N * K + o], g = dy[b * N + o];
      long double sum = bias, abs = std::fabs(bias);
      for (std::size_t k = 0; k < K; ++k) {
        const long double w = p[o * K + k], xv = x[b * K + k];
        sum += w * xv;
        abs += std::fabs(w * xv);
        r.dw[o * K + k] += g * xv;
        r.dwSum[o * K + k] += std::fabs(g * xv);
        r.dx[b * K + k] += g * w;
        r.dxSum[b * K + k] += std::fabs(g * w);
      }
      r.y[b * N + o] = sum;
      r.ySum[b * N + o] = abs;
      r.db[o] += g;
      r.dbSum[o] += std::fabs(g);
    }
  return r;
}

struct Outputs {
  std::vector<float> y, dw, db, dx, w;  // w: the weights after the step (sgd)
};

enum class Mode { Plain, Relu, Sgd };

// One forward and one backward of a bf16 DenseT (Sgd: backwardSgd with rate lr, no ReLU).
Outputs runLayer(const Shape3& s, const std::vector<float>& params, const std::vector<float>& x,
                 const std::vector<float>& dy, Mode mode, float lr = 0.0f) {
  Bf16Scope bf16;
  DenseT<float> dense(s.K, s.N);
  Outputs o{
      std::vector<float>(std::size_t(s.N) * s.B), {}, {}, std::vector<float>(std::size_t(s.K) * s.B, -7.0f), params};
  std::vector<float> grads(params.size(), -7.0f);
  dense.bind(o.w.data(), grads.data());
  dense.reserve(s.B);
  CMapT<float> xm(x.data(), s.K, s.B);
  MapT<float> ym(o.y.data(), s.N, s.B), dxm(o.dx.data(), s.K, s.B);
  const CMapT<float> yc(o.y.data(), s.N, s.B), dyc(dy.data(), s.N, s.B);
  if (mode == Mode::Relu) {
    dense.forwardRelu(xm, ym);
    dense.backwardRelu(xm, yc, dyc, &dxm);
  } else {
    dense.forward(xm, ym, true);
    if (mode == Mode::Sgd)
      dense.backwardSgd(xm, nullptr, dyc, &dxm, lr);
    else
      dense.backward(xm, yc, dyc, &dxm);
  }
  const std::size_t nw = std::size_t(s.K) * s.N;
  o.dw.assign(grads.begin(), grads.begin() + nw);
  o.db.assign(grads.begin() + nw, grads.end());
  return o;
}

void checkShape(const Shape3& s, bool bf16Operands, std::uint64_t seed, bool relu) {
  const std::size_t nw = std::size_t(s.K) * s.N;
  const auto params = randomFloats(nw + s.N, seed, bf16Operands);
  const auto x = randomFloats(std::size_t(s.K) * s.B, seed + 1, bf16Operands);
  auto dy = randomFloats(std::size_t(s.N) * s.B, seed + 2, bf16Operands);
  const Outputs got = runLayer(s, params, x, dy, relu ? Mode::Relu : Mode::Plain);
  if (relu)
    for (std::size_t i = 0; i < dy.size(); ++i) dy[i] = got.y[i] > 0.0f ? dy[i] : 0.0f;
  Reference ref = reference(s, params, x, dy);
  if (relu)
    for (auto& v : ref.y) v = std::max(v, 0.0L);
  const double u = fp32SumError(bf16Operands), product = bf16ProductError(bf16Operands);
  const double worst = std::max({worstRatio("y", got.y, ref.y, ref.ySum, s.K, u, product),
                                 worstRatio("dw", got.dw, ref.dw, ref.dwSum, s.B, u, product),
                                 worstRatio("dx", got.dx, ref.dx, ref.dxSum, s.N, u, product)});
  worstRatio("db", got.db, ref.db, ref.dbSum, s.B, u, 0.0);  // fp32 sums of fp32 values
  if (!bf16Operands) {
    EXPECT_GT(worst, kBf16Shows) << "no sign of bf16 rounding";
  }
}

const std::vector<Shape3>& shapes() {
  static const std::vector<Shape3> s = {
      {37, 21, 5},     // odd K, N and batch; one half tile of samples
      {200, 200, 32},  // W1's fc2: N not a multiple of the 12-row forward tile, K not of 16
      {64, 10, 3},     // a few samples (the fp32 path's dot-product case)
      {100, 33, 41},   // a full chunk of 32 and a half one of 9; N odd
      {3136, 24, 8},   // W2's fc1 inputs (several input strips), few outputs
  };
  return s;
}

std::string describe(const Shape3& s) {
  return std::to_string(s.K) + " -> " + std::to_string(s.N) + ", batch " + std::to_string(s.B);
}

TEST(Bf16Dense, ExactProductsAccumulateInFp32) {
  if (skipWithoutBf16()) GTEST_SKIP() << bf16Missing();
  std::uint64_t seed = 21;
  for (const Shape3& s : shapes()) {
    SCOPED_TRACE(describe(s));
    checkShape(s, true, seed += 10, false);
  }
}

TEST(Bf16Dense, Fp32OperandsWithinBf16Rounding) {
  if (skipWithoutBf16()) GTEST_SKIP() << bf16Missing();
  std::uint64_t seed = 321;
  for (const Shape3& s : shapes()) {
    SCOPED_TRACE(describe(s));
    checkShape(s, false, seed += 10, false);
  }
}

TEST(Bf16Dense, FusedReluWithinBf16Rounding) {
  if (skipWithoutBf16()) GTEST_SKIP() << bf16Missing();
  std::uint64_t seed = 721;
  for (const Shape3& s : shapes()) {
    SCOPED_TRACE(describe(s));
    checkShape(s, false, seed += 10, true);
  }
}

TEST(Bf16Dense, SgdStepIsTheGradientAppliedOnce) {
  if (skipWithoutBf16()) GTEST_SKIP() << bf16Missing();
  // backwardSgd: the same dx, the bias gradient, and W - lr dW with one rounding from the weight
  // gradient that backward() returns: the same chains, the update fused in.
  for (const Shape3& s : {Shape3{37, 21, 5}, Shape3{100, 33, 41}}) {
    SCOPED_TRACE(describe(s));
    const std::size_t nw = std::size_t(s.K) * s.N;
    const auto params = randomFloats(nw + s.N, 5, false);
    const auto x = randomFloats(std::size_t(s.K) * s.B, 6, false), dy = randomFloats(std::size_t(s.N) * s.B, 7, false);
    const float lr = 0.05f;
    const Outputs plain = runLayer(s, params, x, dy, Mode::Plain), sgd = runLayer(s, params, x, dy, Mode::Sgd, lr);
    EXPECT_EQ(plain.y, sgd.y);
    EXPECT_EQ(plain.dx, sgd.dx);
    EXPECT_EQ(plain.db, sgd.db);
    for (std::size_t i = 0; i < nw; ++i) ASSERT_EQ(sgd.w[i], std::fma(-lr, plain.dw[i], params[i])) << "weight " << i;
    for (int o = 0; o < s.N; ++o) ASSERT_EQ(sgd.w[nw + o], std::fma(-lr, plain.db[o], params[nw + o])) << "bias " << o;
  }
}

TEST(Bf16Dense, SameBitsWhateverTheBatchAndRepeatable) {
  if (skipWithoutBf16()) GTEST_SKIP() << bf16Missing();
  // A batch of 41 (a full chunk and a half one), its first 3 samples alone, and sample 35 alone: the
  // same outputs; a second run repeats the first, gradients included.
  const Shape3 s{100, 33, 41};
  const auto params = randomFloats(std::size_t(s.K) * s.N + s.N, 8, false);
  const auto x = randomFloats(std::size_t(s.K) * s.B, 9, false), dy = randomFloats(std::size_t(s.N) * s.B, 10, false);
  const Outputs all = runLayer(s, params, x, dy, Mode::Plain), again = runLayer(s, params, x, dy, Mode::Plain);
  EXPECT_EQ(all.y, again.y);
  EXPECT_EQ(all.dw, again.dw);
  EXPECT_EQ(all.dx, again.dx);
  const Outputs few = runLayer({s.K, s.N, 3}, params, x, dy, Mode::Plain);
  for (std::size_t i = 0; i < few.y.size(); ++i) ASSERT_EQ(few.y[i], all.y[i]) << i;
  for (std::size_t i = 0; i < few.dx.size(); ++i) ASSERT_EQ(few.dx[i], all.dx[i]) << i;
  const std::vector<float> x35(x.begin() + 35 * s.K, x.begin() + 36 * s.K),
      dy35(dy.begin() + 35 * s.N, dy.begin() + 36 * s.N);
  const Outputs one = runLayer({s.K, s.N, 1}, params, x35, dy35, Mode::Plain);
  for (int o = 0; o < s.N; ++o) ASSERT_EQ(one.y[o], all.y[35 * s.N + o]) << o;
  for (int k = 0; k < s.K; ++k) ASSERT_EQ(one.dx[k], all.dx[35 * s.K + k]) << k;
}

}  // namespace
}  // namespace fedsilo::test
