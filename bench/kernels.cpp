// fedsilo kernel benchmarks (Google Benchmark). Figures, never assertions: see docs/performance.md.
//
// Groups (use --benchmark_filter=REGEX):
//   Dense/...          DenseT<float> forward, forward+ReLU, backward at the W1 shapes (batch 32) and
//                      the eval batch 1000, W2's fully connected layers          -> GFLOP/s
//   DenseEigen/...     the same products written as Eigen expressions (what DenseT ran before
//                      its own kernels; with -DFEDSILO_GEMM=openblas Eigen calls sgemm)
//   Sgemm/...          the same products through OpenBLAS sgemm_ directly      -> GFLOP/s
//   Conv2D/...         Conv2D forward / backward at the W2 shapes (if src/nn/conv2d.hpp exists)
//   Step/...           a whole training step (Model::lossAndGradient + SGD) of the W1 MLP and of
//                      cnn_mcmahan; samples/s, GFLOP/s and heap allocations per step
//   LocalTrainer/...   one local epoch of a W1 client (gather, step, SGD) on a synthetic u8 dataset
//   Eval/...           evaluation of 10,000 samples at batch 1000
//   Sgd/...            the SGD step over 199,210 (W1) and 1,663,370 (W2) parameters -> GB/s
//   Adam/...           the Adam (AMSGrad) step over the same sizes                  -> GB/s
//   Augment/...        data.augment = affine on a batch of 128 FashionMNIST-shaped images, and its cost
//                      relative to one training step (lossAndGradient + Adam) of W2 (cnn_mcmahan) and
//                      cnn_playerfl at batch 128: counter aug/step
//   ExactSum/...       FedAvg's exact accumulate (ExactSum::addScaled)          -> GB/s, Mparam/s
//   ReduceExact/...    its MPI reduce on a one-rank world communicator         -> GB/s
//   Hdf5/...           one round appended to a results file (ResultsWriter)     -> rounds/s
//
// bench/ab_baseline.sh builds this file against another source tree (e.g. the commit before an
// optimisation, with -DFEDSILO_BENCH_BASELINE) and runs both binaries alternately.
//
// FLOP counts: 2 per multiply-add of the products only. Counters are rates over CPU time (the
// default of Google Benchmark): on the shared build machine wall time includes other jobs.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "comm/communicator.hpp"
#include "comm/placement.hpp"
#include "core/exact_sum.hpp"
#include "core/malloc_counter.hpp"
#include "core/rng.hpp"
#include "data/dataset.hpp"
#include "fl/local_trainer.hpp"
#include "io/results_writer.hpp"
#include "nn/bf16.hpp"
#include "nn/dense.hpp"
#include "nn/kernel_table.hpp"
#include "nn/model.hpp"
#include "nn/presets.hpp"
#if __has_include("optim/optimizer.hpp")
#include "data/augment.hpp"
#include "optim/optimizer.hpp"
#define FEDSILO_BENCH_OPTIMIZER 1
#else
#include "optim/sgd.hpp"
#endif
#if __has_include("nn/conv2d.hpp")
#include "nn/conv2d.hpp"
#define FEDSILO_BENCH_CONV 1
#endif

// ---------------------------------------------------------------------------------------------
extern "C" {
// OpenBLAS (Fortran interface; linked through the project's BLAS::BLAS). With FEDSILO_GEMM=openblas
// Eigen's blas.h (EIGEN_USE_BLAS) has already declared sgemm_.
#ifndef EIGEN_USE_BLAS
void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc);
#endif
void openblas_set_num_threads(int);
char* openblas_get_corename(void);
}

namespace {

using namespace fedsilo;

#ifdef FEDSILO_BENCH_OPTIMIZER
// Plain SGD (optionally with momentum) over a whole flat buffer of n parameters.
class PlainSgd {
 public:
  PlainSgd(double lr, double momentum, std::size_t n) : opt_(settings(lr, momentum)), segments_{{0, n, 0}} {
    opt_.prepare(state_, n, 1);
  }
  void step(float* p, const float* g, std::size_t) { opt_.step(p, g, segments_, state_); }

 private:
  static OptimizerSettings settings(double lr, double momentum) {
    OptimizerSettings s;
    s.lr = lr;
    s.momentum = momentum;
    return s;
  }
  Optimizer opt_;
  std::vector<ParamSegment> segments_;
  OptimizerState state_;
};
#else
class PlainSgd {
 public:
  PlainSgd(double lr, double momentum, std::size_t) : sgd_(lr, momentum, 0.0) {}
  void step(float* p, const float* g, std::size_t n) { sgd_.step(p, g, n); }

 private:
  Sgd sgd_;
};
#endif

// Heap allocations between construction and stop() (core/malloc_counter.hpp, included above).
struct AllocCounter {
  AllocCounter() { MallocCounter::start(); }
  long stop() { return MallocCounter::stop(); }
};

std::vector<float> randomFloats(std::size_t n, std::uint64_t seed, float lo = -0.5f, float hi = 0.5f) {
  Rng r(seed, -1, -1, Purpose::Init);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(r.uniform(lo, hi));
  return v;
}

void setFlops(benchmark::State& st, double flopsPerIter) {
  st.counters["GFLOP/s"] = benchmark::Counter(flopsPerIter * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
void setBytes(benchmark::State& st, double bytesPerIter) {
  st.counters["GB/s"] = benchmark::Counter(bytesPerIter * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
#ifdef FEDSILO_BENCH_CONV
// Conv2D at the W2 shapes. Args: inC, H (= W), outC, batch, op (0 forward, 1 backward with dx,
// 2 backward without dx: conv1 is the first layer), chunk (im2col chunk cap in values; 0 = default),
// bf16 (1: train.precision = bf16, nn/bf16.hpp; an error where the CPU lacks it).
void BM_Conv2D(benchmark::State& st) {
  const int inC = static_cast<int>(st.range(0)), hw = static_cast<int>(st.range(1)), outC = static_cast<int>(st.range(2));
  const int batch = static_cast<int>(st.range(3)), op = static_cast<int>(st.range(4));
  const bool bf16 = st.range(6) != 0;
  if (bf16 && !bf16Missing().empty()) return st.SkipWithError(bf16Missing().c_str());
  selectBf16(bf16);
  Conv2DT<float> conv(inC, hw, hw, outC, 5, 1, 2);
  selectBf16(false);
  if (st.range(5) > 0) conv.setMaxChunkElems(st.range(5));
  std::size_t np = 0;
  for (const auto& s : conv.paramSpecs()) np += static_cast<std::size_t>(s.size);
  std::vector<float> params = randomFloats(np, 1), grads(np);
  conv.bind(params.data(), grads.data());
  conv.reserve(batch);
  const int inRows = inC * hw * hw, outRows = conv.outputShape().size();
  std::vector<float> x = randomFloats(static_cast<std::size_t>(inRows) * batch, 2, 0.0f, 1.0f);
  std::vector<float> y(static_cast<std::size_t>(outRows) * batch), dy = randomFloats(y.size(), 3), dx(x.size());
  CMapT<float> xm(x.data(), inRows, batch);
  MapT<float> ym(y.data(), outRows, batch);
  conv.forward(xm, ym, true);
  MapT<float> dxm(dx.data(), inRows, batch);
  for (auto _ : st) {
    if (op == 0)
      conv.forward(xm, ym, true);
    else
      conv.backward(xm, CMapT<float>(y.data(), outRows, batch), CMapT<float>(dy.data(), outRows, batch),
                    op == 1 ? &dxm : nullptr);
    benchmark::ClobberMemory();
  }
  const double fwd = 2.0 * outC * inC * 25.0 * hw * hw * batch;
  setFlops(st, op == 0 ? fwd : (op == 1 ? 2.0 * fwd : fwd));
}
// The gather GEMM alone (nn/kernel_table.hpp) on a conv2-like shape: positions x taps x channels
// from L2-resident buffers. Args: positions, taps (channels x 25), out channels.
void BM_ConvGemm(benchmark::State& st) {
  const int n = static_cast<int>(st.range(0)), inC = static_cast<int>(st.range(1)), C = static_cast<int>(st.range(2));
  const int side = 14, pad = 2, wp = side + 2 * pad, plane = wp * wp, K = inC * 25;
  const int samples = (n + side * side - 1) / (side * side);
  std::vector<float> x = randomFloats(static_cast<std::size_t>(samples) * inC * plane, 1);
  std::vector<float> wt = randomFloats(static_cast<std::size_t>(K) * C, 2), z(static_cast<std::size_t>(n) * C);
  std::vector<std::int32_t> rowBase(n), tap(K);
  for (int i = 0; i < n; ++i) {
    const int b = i / (side * side), p = i % (side * side);
    rowBase[i] = b * inC * plane + (p / side) * wp + p % side;
  }
  for (int k = 0; k < K; ++k) tap[k] = (k / 25) * plane + (k % 25 / 5) * wp + k % 5;
  const auto& kc = kernels::active().conv;
  for (auto _ : st) {
    kc.gemm(x.data(), rowBase.data(), n, tap.data(), K, wt.data(), C, C, z.data(), C);
    benchmark::ClobberMemory();
  }
  setFlops(st, 2.0 * n * K * C);
}
BENCHMARK(BM_ConvGemm)->Name("ConvGemm")->ArgNames({"n", "inC", "outC"})->Args({588, 32, 64})->Args({392, 64, 128})->Args({147, 128, 256})->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_Conv2D)
    ->Name("Conv2D")
    ->ArgNames({"inC", "hw", "outC", "batch", "op", "chunk", "bf16"})
    ->Args({1, 28, 32, 32, 0, 0, 0})
    ->Args({1, 28, 32, 32, 2, 0, 0})
    ->Args({32, 14, 64, 32, 0, 0, 0})
    ->Args({32, 14, 64, 32, 1, 0, 0})
    ->Args({1, 28, 32, 32, 0, 0, 1})
    ->Args({1, 28, 32, 32, 2, 0, 1})
    ->Args({32, 14, 64, 32, 0, 0, 1})
    ->Args({32, 14, 64, 32, 1, 0, 1})
    ->Args({32, 14, 64, 32, 0, 131072, 0})
    ->Args({32, 14, 64, 32, 1, 131072, 0})
    ->Args({32, 14, 64, 32, 0, 262144, 0})
    ->Args({32, 14, 64, 32, 1, 262144, 0})
    ->Args({32, 14, 64, 32, 0, 524288, 0})
    ->Args({32, 14, 64, 32, 1, 524288, 0})
    ->Args({32, 14, 64, 32, 0, 1048576, 0})
    ->Args({32, 14, 64, 32, 1, 1048576, 0})
    ->Unit(benchmark::kMicrosecond);
#endif

// ---------------------------------------------------------------------------------------------
// A whole training step: forward, loss, backward, SGD. Args: model (0 mlp = W1, 1 cnn_mcmahan = W2,
// 2 cnn_playerfl), batch, fused (1 default; 0 runs Dense/Conv2D and ReLU as separate layers), sgd (0
// lossAndGradient + Sgd::step, 1 Model::sgdStep: the SGD update fused into the Dense weight gradient,
// what LocalTrainer runs for plain SGD).
void BM_TrainStep(benchmark::State& st) {
  static const char* const kNames[] = {"mlp", "cnn_mcmahan", "cnn_playerfl"};
  // exact training FLOPs per sample: forward + weight gradients + input gradients of every layer but the
  // first, 2 FLOPs per multiply-add (docs/performance.md, "FLOPs per sample")
  static const double kFlops[] = {879200.0, 72384512.0, 486866800.0};
  const int which = static_cast<int>(st.range(0)), batch = static_cast<int>(st.range(1));
  const std::string name = kNames[which];
  bool known = false;
  for (const auto& n : modelPresetNames()) known = known || n == name;
  if (!known) {
    st.SkipWithError(("preset " + name + " not built").c_str());
    for (auto _ : st) {
    }
    return;
  }
  ModelConfig cfg;
  cfg.name = parseEnum<ModelPreset>("model", name);
  auto m = buildModel<float>(cfg, InputSpec{Shape{1, 28, 28}, 10, 0});
  Rng init(0, -1, -1, Purpose::Init);
  m->initialize(init);
  m->reserve(batch);
#ifndef FEDSILO_BENCH_BASELINE
  m->setFusion(st.range(2) != 0);
  const bool fusedSgd = st.range(3) != 0;
#else
  const bool fusedSgd = false;
#endif
  std::vector<float> x = randomFloats(784u * batch, 4, 0.0f, 1.0f);
  std::vector<std::int32_t> y(batch);
  for (int j = 0; j < batch; ++j) y[j] = j % 10;
  PlainSgd sgd(0.01, 0.0, static_cast<std::size_t>(m->numParams()));
  m->lossAndGradient(x.data(), y.data(), batch);  // warm-up
  AllocCounter count;
  for (auto _ : st) {
#ifndef FEDSILO_BENCH_BASELINE
    if (fusedSgd) {
      benchmark::DoNotOptimize(m->sgdStep(x.data(), y.data(), batch, 0.01f));
      continue;
    }
#endif
    benchmark::DoNotOptimize(m->lossAndGradient(x.data(), y.data(), batch));
    sgd.step(m->params(), m->grads(), static_cast<std::size_t>(m->numParams()));
  }
  (void)fusedSgd;
  st.counters["mallocs/step"] = static_cast<double>(count.stop()) / static_cast<double>(st.iterations());
  st.counters["samples/s"] = benchmark::Counter(batch, benchmark::Counter::kIsIterationInvariantRate);
  setFlops(st, kFlops[which] * batch);
}
BENCHMARK(BM_TrainStep)
    ->Name("Step")
    ->ArgNames({"model", "batch", "fused", "sgd"})
    ->Args({0, 32, 1, 0})
    ->Args({0, 32, 1, 1})
    ->Args({0, 32, 0, 0})
    ->Args({1, 32, 1, 0})
    ->Args({1, 32, 1, 1})
    ->Args({2, 128, 1, 1})
    ->Unit(benchmark::kMicrosecond);

// A training step as LocalTrainer runs plain SGD (Model::sgdStep) in fp32 and with train.precision = bf16,
// back to back. Args: model (as Step), batch, bf16 (0 or 1; an error where the CPU lacks it).
void BM_StepPrecision(benchmark::State& st) {
  static const char* const kNames[] = {"mlp", "cnn_mcmahan", "cnn_playerfl"};
  const int batch = static_cast<int>(st.range(1));
  const bool bf16 = st.range(2) != 0;
  if (bf16 && !bf16Missing().empty()) return st.SkipWithError(bf16Missing().c_str());
  ModelConfig cfg;
  cfg.name = parseEnum<ModelPreset>("model", kNames[st.range(0)]);
  selectBf16(bf16);
  auto m = buildModel<float>(cfg, InputSpec{Shape{1, 28, 28}, 10, 0});
  selectBf16(false);
  Rng init(0, -1, -1, Purpose::Init);
  m->initialize(init);
  m->reserve(batch);
  std::vector<float> x = randomFloats(784u * batch, 4, 0.0f, 1.0f);
  std::vector<std::int32_t> y(batch);
  for (int j = 0; j < batch; ++j) y[j] = j % 10;
  for (auto _ : st) benchmark::DoNotOptimize(m->sgdStep(x.data(), y.data(), batch, 1e-4f));
  st.counters["samples/s"] = benchmark::Counter(batch, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_StepPrecision)
    ->Name("StepPrecision")
    ->ArgNames({"model", "batch", "bf16"})
    ->Args({0, 32, 0})
    ->Args({0, 32, 1})
    ->Args({1, 32, 0})
    ->Args({1, 32, 1})
    ->Args({2, 128, 0})
    ->Args({2, 128, 1})
    ->Unit(benchmark::kMicrosecond);

// A synthetic FashionMNIST-shaped u8 dataset (contents do not matter for speed).
const Dataset& syntheticData() {
  static Dataset ds = [] {
    Dataset d;
    d.shape = Shape{1, 28, 28};
    d.numClasses = 10;
    const std::size_t n = 60000;
    d.u8.resize(n * 784);
    Rng r(3, -1, -1, Purpose::Init);
    for (auto& v : d.u8) v = static_cast<std::uint8_t>(r.below(256));
    d.labels.resize(n);
    for (std::size_t i = 0; i < n; ++i) d.labels[i] = static_cast<std::int32_t>(r.below(10));
    return d;
  }();
  return ds;
}

// One local epoch of a W1 client (6,000 samples spread over the 60,000-sample pool, as a Dirichlet
// client's are): shuffle, gather (u8 -> float), step, SGD. Arg: samples.
void BM_LocalEpoch(benchmark::State& st) {
  const Dataset& data = syntheticData();
  const std::size_t n = static_cast<std::size_t>(st.range(0));
  IndexList idx(n);
  for (std::size_t i = 0; i < n; ++i) idx[i] = static_cast<Index>(i * (data.size() / static_cast<Index>(n)));
  ModelConfig cfg;
  auto m = buildModel<float>(cfg, InputSpec{data.shape, 10, 0});
  Rng init(0, -1, -1, Purpose::Init);
  m->initialize(init);
  m->reserve(1000);
  LocalTrainer trainer(data, 1000);
  TrainOptions opt;
  opt.optimizer.lr = 0.01;
  std::vector<float> start(m->params(), m->params() + m->numParams());
  int round = 0;
  long allocs = 0, steps = 0;
  for (auto _ : st) {
    std::copy(start.begin(), start.end(), m->params());
    Rng shuffle(0, 1, round++, Purpose::Shuffle);
    AllocCounter count;
    const TrainStats ts = trainer.train(*m, idx, opt, shuffle, 1, round);
    allocs += count.stop();
    steps += ts.steps;
  }
  st.counters["samples/s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  st.counters["mallocs/step"] = static_cast<double>(allocs) / static_cast<double>(std::max(1L, steps));
}
BENCHMARK(BM_LocalEpoch)->Name("LocalTrainer/epoch")->ArgName("samples")->Arg(6000)->Unit(benchmark::kMillisecond);

// Evaluation of 10,000 samples at batch 1000 (the W1 global test evaluation).
void BM_Eval(benchmark::State& st) {
  const Dataset& data = syntheticData();
  IndexList idx(10000);
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<Index>(i);
  ModelConfig cfg;
  auto m = buildModel<float>(cfg, InputSpec{data.shape, 10, 0});
  Rng init(0, -1, -1, Purpose::Init);
  m->initialize(init);
  m->reserve(1000);
  LocalTrainer trainer(data, 1000);
  for (auto _ : st) benchmark::DoNotOptimize(trainer.evaluate(*m, data, idx, 1000).correct);
  st.counters["samples/s"] = benchmark::Counter(10000.0, benchmark::Counter::kIsIterationInvariantRate);
  setFlops(st, 397600.0 * 10000.0);
}
BENCHMARK(BM_Eval)->Name("Eval/mlp_10k")->Unit(benchmark::kMillisecond);

// ---------------------------------------------------------------------------------------------
void BM_Sgd(benchmark::State& st) {
  const std::size_t n = static_cast<std::size_t>(st.range(0));
  const bool momentum = st.range(1) != 0;
  std::vector<float> p = randomFloats(n, 1), g = randomFloats(n, 2);
  PlainSgd sgd(0.01, momentum ? 0.9 : 0.0, n);
  for (auto _ : st) {
    sgd.step(p.data(), g.data(), n);
    benchmark::ClobberMemory();
  }
  setBytes(st, (momentum ? 5.0 : 3.0) * 4.0 * static_cast<double>(n));  // p, g read, p written (+ v r/w)
}
BENCHMARK(BM_Sgd)->Name("Sgd/step")->ArgNames({"params", "momentum"})->Args({199210, 0})->Args({1663370, 0})->Args({199210, 1});

#ifdef FEDSILO_BENCH_OPTIMIZER
OptimizerSettings adamSettings() {
  OptimizerSettings s;
  s.kind = OptimizerKind::Adam;
  s.lr = 1e-3;
  s.weightDecay = 1e-4;
  s.amsgrad = true;
  return s;
}

// Adam with AMSGrad and L2 weight decay. Bytes: p, m, v, vmax read and written, g read.
void BM_Adam(benchmark::State& st) {
  const std::size_t n = static_cast<std::size_t>(st.range(0));
  std::vector<float> p = randomFloats(n, 1), g = randomFloats(n, 2);
  const Optimizer adam(adamSettings());
  OptimizerState state;
  adam.prepare(state, n, 1);
  const std::vector<ParamSegment> all{{0, n, 0}};
  for (auto _ : st) {
    adam.step(p.data(), g.data(), all, state);
    benchmark::ClobberMemory();
  }
  setBytes(st, 9.0 * 4.0 * static_cast<double>(n));
}
BENCHMARK(BM_Adam)->Name("Adam/step")->ArgNames({"params"})->Args({199210})->Args({1663370});

// Augmentation of a batch of 128 images (rotation, translation, scale, flip and crop all on), keyed
// per sample as LocalTrainer keys it, timed per batch; then the counter aug/step is that time over the
// time of one training step (lossAndGradient + Adam step) of the model at batch 128, measured in the
// same run. model: 0 = cnn_mcmahan (W2), 1 = cnn_playerfl.
void BM_AugmentVsStep(benchmark::State& st) {
  const int batch = 128;
  const Shape shape{1, 28, 28};
  AugmentSettings a;
  a.rotation = 10;
  a.translate = 0.1;
  a.scaleMin = 0.9;
  a.scaleMax = 1.1;
  a.flip = true;
  a.cropPadding = 2;
  Augmenter augmenter(a, shape, {0.0f}, "bench");
  std::vector<float> x = randomFloats(784u * batch, 4, 0.0f, 1.0f);
  std::uint64_t position = 0;
  const auto augmentBatch = [&] {
    for (int j = 0; j < batch; ++j, ++position) {
      Rng rng(1, 3, 5, Purpose::Augment, mix64(position));
      augmenter.apply(augmenter.draw(rng), x.data() + static_cast<std::size_t>(j) * 784);
    }
  };
  double augmentSeconds = 0.0;
  for (auto _ : st) {
    const auto t0 = std::chrono::steady_clock::now();
    augmentBatch();
    augmentSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    benchmark::ClobberMemory();
  }
  ModelConfig cfg;
  cfg.name = st.range(0) == 0 ? ModelPreset::CnnMcMahan : ModelPreset::CnnPlayerFl;
  auto m = buildModel<float>(cfg, InputSpec{shape, 10, 0});
  Rng init(0, -1, -1, Purpose::Init);
  m->initialize(init);
  m->reserve(batch);
  std::vector<std::int32_t> y(batch);
  for (int j = 0; j < batch; ++j) y[j] = j % 10;
  const Optimizer adam(adamSettings());
  OptimizerState state;
  const std::size_t P = static_cast<std::size_t>(m->numParams());
  adam.prepare(state, P, 1);
  const std::vector<ParamSegment> all{{0, P, 0}};
  m->lossAndGradient(x.data(), y.data(), batch);  // warm-up
  const int steps = 3;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) {
    benchmark::DoNotOptimize(m->lossAndGradient(x.data(), y.data(), batch));
    adam.step(m->params(), m->grads(), all, state);
  }
  const double stepSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / steps;
  const double perBatch = augmentSeconds / static_cast<double>(st.iterations());
  st.counters["aug_ms"] = perBatch * 1e3;
  st.counters["step_ms"] = stepSeconds * 1e3;
  st.counters["aug/step"] = perBatch / stepSeconds;
}
BENCHMARK(BM_AugmentVsStep)
    ->Name("Augment/batch128")
    ->ArgNames({"playerfl"})
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond);
#endif

// acc += w * v (199,210 / 1,663,370 parameters). Bytes: v read (4), accumulator read + written (32).
void BM_ExactAddScaled(benchmark::State& st) {
  const std::size_t n = static_cast<std::size_t>(st.range(0));
  std::vector<float> v = randomFloats(n, 1);
  ExactSum acc(n);
  double w = 0.1047;
  for (auto _ : st) {
    acc.addScaled(0, v.data(), n, w);
    benchmark::ClobberMemory();
  }
  setBytes(st, 36.0 * static_cast<double>(n));
  st.counters["Mparam/s"] = benchmark::Counter(static_cast<double>(n) * 1e-6, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ExactAddScaled)->Name("ExactSum/addScaled")->ArgName("params")->Arg(199210)->Arg(1663370);

// Communicator::reduceExact on MPI_COMM_WORLD (one rank here: the custom MPI_Op's local cost).
void BM_ReduceExact(benchmark::State& st) {
  const std::size_t n = static_cast<std::size_t>(st.range(0));
  Communicator comm = Communicator::world();
  ExactSum acc(n);
  std::vector<float> v = randomFloats(n, 1);
  acc.addScaled(0, v.data(), n, 0.5);
  for (auto _ : st) {
    comm.reduceExact(acc, 0);
    benchmark::ClobberMemory();
  }
  setBytes(st, 16.0 * static_cast<double>(n));
  st.counters["ranks"] = comm.size();
}
BENCHMARK(BM_ReduceExact)->Name("ReduceExact/world")->ArgName("params")->Arg(199210)->Arg(1663370);

// One round appended to a results file: 6 scalars and 5 per-client rows, as Experiment writes.
// Args: clients, mpi (1: world communicator with MPI-IO, 0: Communicator::single()).
void BM_Hdf5Round(benchmark::State& st) {
  const int K = static_cast<int>(st.range(0));
  const bool mpi = st.range(1) != 0;
  Communicator comm = mpi ? Communicator::world() : Communicator::single();
  Placement placement(K, comm.size());
  const std::string path =
      (std::filesystem::temp_directory_path() / ("fedsilo_bench_" + std::to_string(::getpid()) + ".h5")).string();
  std::vector<double> clients(static_cast<std::size_t>(placement.count(comm.rank())), 0.5);
  {
    ResultsWriter w(path, comm, placement);
    int round = 0;
    for (auto _ : st) {
      w.appendRoundScalar("round", round);
      for (const char* s : {"global_accuracy", "global_loss", "seconds", "train_seconds"}) w.appendRoundScalar(s, 0.25);
      for (const char* s : {"client_accuracy", "client_f1", "client_loss", "weight", "participated"})
        w.appendRoundClients(s, clients);
      w.endRound();
      ++round;
    }
    // destroyed without commit(): the partial file is removed
  }
  st.counters["rounds/s"] = benchmark::Counter(1.0, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Hdf5Round)
    ->Name("Hdf5/append_round")
    ->ArgNames({"clients", "mpi"})
    ->Args({10, 1})
    ->Args({10, 0})
    ->Args({10000, 1})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  fedsilo::MpiEnvironment mpi(argc, argv);
  openblas_set_num_threads(1);
  benchmark::AddCustomContext("openblas_core", openblas_get_corename());
#if defined(__AVX512F__)
  benchmark::AddCustomContext("dense_kernels", "fedsilo AVX-512");
#else
  benchmark::AddCustomContext("dense_kernels", "Eigen");
#endif
#ifdef FEDSILO_GEMM_OPENBLAS
  benchmark::AddCustomContext("FEDSILO_GEMM", "openblas (Eigen products call sgemm)");
#else
  benchmark::AddCustomContext("FEDSILO_GEMM", "eigen");
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
