// GemmWorkspace (Eigen's GEBP driver with preallocated packing buffers) against Eigen's product.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "grad_check.hpp"
#include "nn/gemm.hpp"
#include "nn/isa.hpp"
#include "nn/kernels.hpp"
#include "nn/packed_gemm.hpp"

namespace fedsilo::test {
namespace {

template <typename T, typename Ws>
void checkGemm(Ws& ws, GemmOp opA, GemmOp opB, Index m, Index n, Index k, T alpha, T beta,
               std::uint64_t seed, double tol) {
  // Stored shapes with padded leading dimensions (lda > rows) to exercise the strides.
  const Index ar = opA == GemmOp::N ? m : k, ac = opA == GemmOp::N ? k : m;
  const Index br = opB == GemmOp::N ? k : n, bc = opB == GemmOp::N ? n : k;
  const Index lda = ar + 3, ldb = br + 1, ldc = m + 2;
  auto rv = [&](Index size, std::uint64_t s) {
    const auto d = randomVector(static_cast<std::size_t>(size), s);
    return std::vector<T>(d.begin(), d.end());
  };
  const std::vector<T> a = rv(lda * ac, seed), b = rv(ldb * bc, seed + 1);
  std::vector<T> c = rv(ldc * n, seed + 2);
  if (beta == T(0)) c[0] = std::numeric_limits<T>::quiet_NaN();  // beta = 0 must not propagate NaN
  using OMap = Eigen::Map<const MatT<T>, 0, Eigen::OuterStride<>>;
  const OMap am(a.data(), ar, ac, Eigen::OuterStride<>(lda)), bm(b.data(), br, bc, Eigen::OuterStride<>(ldb));
  MatT<T> opa = opA == GemmOp::N ? MatT<T>(am) : MatT<T>(am.transpose());
  MatT<T> opb = opB == GemmOp::N ? MatT<T>(bm) : MatT<T>(bm.transpose());
  MatT<T> want = alpha * opa * opb;
  if (beta != T(0)) want += beta * OMap(c.data(), m, n, Eigen::OuterStride<>(ldc));
  const std::vector<T> before = c;
  ws.run(opA, opB, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  for (Index j = 0; j < n; ++j) {
    for (Index i = 0; i < m; ++i)
      ASSERT_NEAR(c[j * ldc + i], want(i, j), tol * (1 + std::abs(want(i, j)))) << i << "," << j;
    for (Index i = m; i < ldc; ++i) ASSERT_EQ(std::memcmp(&c[j * ldc + i], &before[j * ldc + i], sizeof(T)), 0);
  }
}

template <typename T, template <typename> class Ws = GemmWorkspace>
void allCombos(double tol) {
  struct Shape3 {
    Index m, n, k;
  };
  Ws<T> ws;
  ws.reserve(300, 200, 500);
  std::uint64_t seed = 1;
  for (auto s : {Shape3{1, 1, 1}, Shape3{7, 5, 3}, Shape3{64, 32, 25}, Shape3{300, 200, 500}, Shape3{513, 70, 900}}) {
    for (GemmOp oa : {GemmOp::N, GemmOp::T})
      for (GemmOp ob : {GemmOp::N, GemmOp::T})
        for (T beta : {T(0), T(1), T(0.5)}) {
          SCOPED_TRACE(::testing::Message() << s.m << "x" << s.n << "x" << s.k << " opA " << int(oa) << " opB "
                                            << int(ob) << " beta " << beta);
          checkGemm<T>(ws, oa, ob, s.m, s.n, s.k, T(1.5), beta, seed += 3, tol);
        }
  }
}

TEST(Gemm, MatchesEigenDouble) { allCombos<double>(1e-12); }
TEST(Gemm, MatchesEigenFloat) { allCombos<float>(1e-4); }

// The packed kernels (transformer products): shapes that cut every block and tile at odd places, and
// products larger than the reserved blocks (513 x 70 x 900 after reserve(300, 200, 500)).
// Runs f(isa) with each kernel set this CPU has selected, restoring the set chosen before.
template <class F>
void forEachKernelSet(F f) {
  for (Isa isa : {Isa::Avx512, Isa::Avx2, Isa::Generic}) {
    if (static_cast<int>(isa) > static_cast<int>(cpuIsa())) continue;
    const Isa before = activeIsa();
    selectIsa(isa);
    f(isa);
    selectIsa(before);
  }
}

TEST(PackedGemm, MatchesEigenFloat) { allCombos<float, PackedGemm>(1e-4); }
TEST(PackedGemm, DoubleRunsOnEigen) { allCombos<double, PackedGemm>(1e-12); }

// Every kernel set gives the same bits, and an element's bits do not depend on the product around it:
// a column computed alone equals the same column of the whole product.
TEST(PackedGemm, EverySetAndEveryShapeGivesTheSameBits) {
  const Index m = 301, n = 29, k = 530;
  const auto a = randomVector(static_cast<std::size_t>(m * k), 7), b = randomVector(static_cast<std::size_t>(k * n), 8);
  const std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
  std::vector<std::vector<float>> results;
  forEachKernelSet([&](Isa isa) {
    PackedGemm<float> ws;
    ws.reserve(m, n, k);
    std::vector<float> c(static_cast<std::size_t>(m * n));
    ws.run(GemmOp::N, GemmOp::T, m, n, k, 1.0f, af.data(), m, bf.data(), n, 0.0f, c.data(), m);
    std::vector<float> col(static_cast<std::size_t>(m));
    ws.run(GemmOp::N, GemmOp::T, m, 1, k, 1.0f, af.data(), m, bf.data() + 17, n, 0.0f, col.data(), m);
    EXPECT_EQ(std::memcmp(col.data(), c.data() + 17 * m, col.size() * sizeof(float)), 0) << isaName(isa);
    results.push_back(c);
  });
  for (std::size_t i = 1; i < results.size(); ++i)
    EXPECT_EQ(std::memcmp(results[0].data(), results[i].data(), results[0].size() * sizeof(float)), 0) << "set " << i;
}

// Every operand order (the packing transposes a row-major A and a column-major B in registers) and a
// scaled A: each element of C is the chain fma(alpha * op(A)(i, p), op(B)(p, j), .) over p in order from
// +0, bit for bit, in every kernel set, on a shape with edge tiles and several k blocks.
TEST(PackedGemm, EveryOperandOrderIsOneChainOfFmasInOrder) {
  const Index m = 45, n = 17, k = 300;
  const auto a = randomVector(static_cast<std::size_t>(m * k), 9),
             b = randomVector(static_cast<std::size_t>(k * n), 10);
  const std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
  for (GemmOp opA : {GemmOp::N, GemmOp::T})
    for (GemmOp opB : {GemmOp::N, GemmOp::T})
      for (float alpha : {1.0f, 0.37f}) {
        const Index lda = opA == GemmOp::T ? k : m, ldb = opB == GemmOp::T ? n : k;
        const auto opAAt = [&](Index i, Index p) { return opA == GemmOp::T ? af[i * lda + p] : af[p * lda + i]; };
        const auto opBAt = [&](Index p, Index j) { return opB == GemmOp::T ? bf[p * ldb + j] : bf[j * ldb + p]; };
        std::vector<float> expected(static_cast<std::size_t>(m * n));
        for (Index j = 0; j < n; ++j)
          for (Index i = 0; i < m; ++i) {
            float acc = 0.0f;
            for (Index p = 0; p < k; ++p) acc = std::fma(alpha * opAAt(i, p), opBAt(p, j), acc);
            expected[i + j * m] = acc;
          }
        forEachKernelSet([&](Isa isa) {
          PackedGemm<float> ws;
          ws.reserve(m, n, k);
          std::vector<float> c(expected.size(), 5.0f);
          ws.run(opA, opB, m, n, k, alpha, af.data(), lda, bf.data(), ldb, 0.0f, c.data(), m);
          EXPECT_EQ(std::memcmp(c.data(), expected.data(), c.size() * sizeof(float)), 0)
              << isaName(isa) << " opA " << (opA == GemmOp::T) << " opB " << (opB == GemmOp::T) << " alpha " << alpha;
        });
      }
}

TEST(Gemm, ZeroDepthScalesC) {
  GemmWorkspace<double> ws;
  ws.reserve(2, 2, 1);
  std::vector<double> c = {1, 2, 3, 4};
  ws.run(GemmOp::N, GemmOp::N, 2, 2, 0, 1.0, nullptr, 2, nullptr, 1, 0.5, c.data(), 2);
  EXPECT_EQ(c, (std::vector<double>{0.5, 1, 1.5, 2}));
}

}  // namespace
}  // namespace fedsilo::test
