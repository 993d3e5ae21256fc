// Dense layer benchmarks (bench_main.cpp: the groups Dense/, DenseEigen/, Sgemm/, DensePrecision/).
#include <cstddef>
#include <vector>

#include "bench_common.hpp"
#include "nn/bf16.hpp"
#include "nn/dense.hpp"

extern "C" {
// OpenBLAS (Fortran interface; linked through the project's BLAS::BLAS). With FEDSILO_GEMM=openblas
// Eigen's blas.h (EIGEN_USE_BLAS) has already declared sgemm_.
#ifndef EIGEN_USE_BLAS
void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc);
#endif
}

namespace {

using namespace fedsilo;
using namespace fedsilo::bench;

// Dense layer. Args: in, out, batch.
struct DenseFixture {
  int in, out, batch;
  std::vector<float> params, grads, x, y, dy, dx;
  DenseT<float> layer;
  DenseFixture(int i, int o, int b) : in(i), out(o), batch(b), layer(i, o) {
    params = randomFloats(static_cast<std::size_t>(i) * o + o, 1);
    grads.assign(params.size(), 0.0f);
    x = randomFloats(static_cast<std::size_t>(i) * b, 2, 0.0f, 1.0f);
    y.assign(static_cast<std::size_t>(o) * b, 0.0f);
    dy = randomFloats(y.size(), 3);
    dx.assign(x.size(), 0.0f);
    layer.bind(params.data(), grads.data());
    layer.reserve(b);
  }
};

void BM_DenseForward(benchmark::State& st) {
  DenseFixture f(static_cast<int>(st.range(0)), static_cast<int>(st.range(1)), static_cast<int>(st.range(2)));
  CMapT<float> x(f.x.data(), f.in, f.batch);
  MapT<float> y(f.y.data(), f.out, f.batch);
  for (auto _ : st) {
    f.layer.forward(x, y, true);
    benchmark::DoNotOptimize(f.y.data());
  }
  setFlops(st, 2.0 * f.in * f.out * f.batch);
}

void BM_DenseForwardRelu(benchmark::State& st) {
  DenseFixture f(static_cast<int>(st.range(0)), static_cast<int>(st.range(1)), static_cast<int>(st.range(2)));
  CMapT<float> x(f.x.data(), f.in, f.batch);
  MapT<float> y(f.y.data(), f.out, f.batch);
  for (auto _ : st) {
#ifndef FEDSILO_BENCH_BASELINE
    f.layer.forwardRelu(x, y);
#else  // built against a tree without the fused layer (bench/ab_baseline.sh): forward + ReLU layer
    f.layer.forward(x, y, true);
    y = y.cwiseMax(0.0f);
#endif
    benchmark::DoNotOptimize(f.y.data());
  }
  setFlops(st, 2.0 * f.in * f.out * f.batch);
}

// Args: in, out, batch, withDx (the first layer of a model needs no input gradient).
void BM_DenseBackward(benchmark::State& st) {
  DenseFixture f(static_cast<int>(st.range(0)), static_cast<int>(st.range(1)), static_cast<int>(st.range(2)));
  const bool withDx = st.range(3) != 0;
  CMapT<float> x(f.x.data(), f.in, f.batch);
  CMapT<float> y(f.y.data(), f.out, f.batch);
  CMapT<float> dy(f.dy.data(), f.out, f.batch);
  MapT<float> dx(f.dx.data(), f.in, f.batch);
  for (auto _ : st) {
    f.layer.backward(x, y, dy, withDx ? &dx : nullptr);
    benchmark::DoNotOptimize(f.grads.data());
  }
  setFlops(st, (withDx ? 4.0 : 2.0) * f.in * f.out * f.batch);
}

// The same three products as Eigen expressions (DenseT's code before its own kernels).
// Args: in, out, batch, op (0 forward y = W x + b, 1 weight gradient dW = dy x^T + db, 2 dx = W^T dy).
void BM_DenseEigen(benchmark::State& st) {
  DenseFixture f(static_cast<int>(st.range(0)), static_cast<int>(st.range(1)), static_cast<int>(st.range(2)));
  const int op = static_cast<int>(st.range(3));
  CMapRMT<float> w(f.params.data(), f.out, f.in);
  Eigen::Map<const VecT<float>> b(f.params.data() + static_cast<std::size_t>(f.in) * f.out, f.out);
  MapRMT<float> dw(f.grads.data(), f.out, f.in);
  Eigen::Map<VecT<float>> db(f.grads.data() + static_cast<std::size_t>(f.in) * f.out, f.out);
  CMapT<float> x(f.x.data(), f.in, f.batch);
  MapT<float> y(f.y.data(), f.out, f.batch);
  CMapT<float> dy(f.dy.data(), f.out, f.batch);
  MapT<float> dx(f.dx.data(), f.in, f.batch);
  AllocCounter count;
  for (auto _ : st) {
    if (op == 0) {
      y.noalias() = w * x;
      y.colwise() += b;
    } else if (op == 1) {
      dw.noalias() = dy * x.transpose();
      db.noalias() = dy.rowwise().sum();
    } else {
      dx.noalias() = w.transpose() * dy;
    }
    benchmark::ClobberMemory();
  }
  st.counters["mallocs/iter"] = static_cast<double>(count.stop()) / static_cast<double>(st.iterations());
  setFlops(st, 2.0 * f.in * f.out * f.batch);
}

// OpenBLAS sgemm on the same products (column-major views of the same buffers). Args as DenseEigen.
void BM_Sgemm(benchmark::State& st) {
  DenseFixture f(static_cast<int>(st.range(0)), static_cast<int>(st.range(1)), static_cast<int>(st.range(2)));
  const int op = static_cast<int>(st.range(3));
  const int K = f.in, N = f.out, B = f.batch;
  const float one = 1.0f, zero = 0.0f;
  for (auto _ : st) {
    if (op == 0)  // y (N x B) = Wc^T x, Wc = W viewed column-major (K x N)
      sgemm_("T", "N", &N, &B, &K, &one, f.params.data(), &K, f.x.data(), &K, &zero, f.y.data(), &N);
    else if (op == 1)  // dW viewed column-major (K x N) = x dy^T
      sgemm_("N", "T", &K, &N, &B, &one, f.x.data(), &K, f.dy.data(), &N, &zero, f.grads.data(), &K);
    else  // dx (K x B) = Wc dy
      sgemm_("N", "N", &K, &B, &N, &one, f.params.data(), &K, f.dy.data(), &N, &zero, f.dx.data(), &K);
    benchmark::ClobberMemory();
  }
  setFlops(st, 2.0 * K * N * B);
}

void DenseShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"in", "out", "batch"});
  for (auto s : std::vector<std::vector<long>>{{784, 200, 32}, {200, 200, 32}, {200, 10, 32}, {784, 200, 1000},
                                                 {200, 200, 1000}, {3136, 512, 32}, {512, 10, 32}})
    b->Args(s);
}
void DenseBackShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"in", "out", "batch", "dx"});
  for (auto s : std::vector<std::vector<long>>{{784, 200, 32, 0}, {200, 200, 32, 1}, {200, 10, 32, 1},
                                                 {3136, 512, 32, 1}, {512, 10, 32, 1}})
    b->Args(s);
}
void GemmShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"in", "out", "batch", "op"});
  for (auto s : std::vector<std::vector<long>>{{784, 200, 32}, {200, 200, 32}, {200, 10, 32}, {3136, 512, 32}})
    for (long op : {0, 1, 2}) b->Args({s[0], s[1], s[2], op});
  b->Args({784, 200, 1000, 0});
}

// DenseT in fp32 and with train.precision = bf16 (nn/bf16.hpp), back to back. Args: in, out, batch, op (0
// forward, 1 backward with dx, 2 the fused backward + SGD step as training runs it), bf16 (0 or 1).
void BM_DensePrecision(benchmark::State& st) {
  const bool bf16 = st.range(4) != 0;
  if (bf16 && !bf16Missing().empty()) return st.SkipWithError(bf16Missing().c_str());
  selectBf16(bf16);
  DenseFixture f(static_cast<int>(st.range(0)), static_cast<int>(st.range(1)), static_cast<int>(st.range(2)));
  selectBf16(false);
  const int op = static_cast<int>(st.range(3));
  CMapT<float> x(f.x.data(), f.in, f.batch), yc(f.y.data(), f.out, f.batch), dy(f.dy.data(), f.out, f.batch);
  MapT<float> y(f.y.data(), f.out, f.batch), dx(f.dx.data(), f.in, f.batch);
  for (auto _ : st) {
    if (op == 0)
      f.layer.forward(x, y, true);
    else if (op == 1)
      f.layer.backward(x, yc, dy, &dx);
    else
      f.layer.backwardSgd(x, nullptr, dy, &dx, 1e-6f);
    benchmark::ClobberMemory();
  }
  setFlops(st, (op == 0 ? 2.0 : 4.0) * f.in * f.out * f.batch);
}
void DensePrecisionShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"in", "out", "batch", "op", "bf16"});
  for (auto s : std::vector<std::vector<long>>{{3136, 512, 32}, {784, 200, 32}, {200, 200, 32}})
    for (long op : {0, 1, 2})
      for (long bf16 : {0, 1}) b->Args({s[0], s[1], s[2], op, bf16});
}

BENCHMARK(BM_DensePrecision)->Name("DensePrecision")->Apply(DensePrecisionShapes);
BENCHMARK(BM_DenseForward)->Name("Dense/forward")->Apply(DenseShapes);
BENCHMARK(BM_DenseForwardRelu)->Name("Dense/forward_relu")->Apply(DenseShapes);
BENCHMARK(BM_DenseBackward)->Name("Dense/backward")->Apply(DenseBackShapes);
BENCHMARK(BM_DenseEigen)->Name("DenseEigen")->Apply(GemmShapes);
BENCHMARK(BM_Sgemm)->Name("Sgemm")->Apply(GemmShapes);

}  // namespace
