// GemmWorkspace (Eigen's GEBP driver with preallocated packing buffers) against Eigen's product.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "grad_check.hpp"
#include "nn/gemm.hpp"

namespace fedsilo::test {
namespace {

template <typename T>
void checkGemm(GemmWorkspace<T>& ws, GemmOp opA, GemmOp opB, Index m, Index n, Index k, T alpha, T beta,
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

template <typename T>
void allCombos(double tol) {
  struct Shape3 {
    Index m, n, k;
  };
  GemmWorkspace<T> ws;
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

TEST(Gemm, ZeroDepthScalesC) {
  GemmWorkspace<double> ws;
  ws.reserve(2, 2, 1);
  std::vector<double> c = {1, 2, 3, 4};
  ws.run(GemmOp::N, GemmOp::N, 2, 2, 0, 1.0, nullptr, 2, nullptr, 1, 0.5, c.data(), 2);
  EXPECT_EQ(c, (std::vector<double>{0.5, 1, 1.5, 2}));
}

}  // namespace
}  // namespace fedsilo::test
