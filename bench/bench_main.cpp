// fedsilo kernel benchmarks (Google Benchmark), one executable, fedsilo_bench. Figures, never assertions: see docs/performance.md.
//
// Groups (use --benchmark_filter=REGEX):
//   Dense/...          DenseT<float> forward, forward+ReLU, backward at the W1 shapes (batch 32) and
//                      the eval batch 1000, W2's fully connected layers          -> GFLOP/s
//   DenseEigen/...     the same products written as Eigen expressions (what DenseT ran before
//                      its own kernels; with -DFEDSILO_GEMM=openblas Eigen calls sgemm)
//   Sgemm/...          the same products through OpenBLAS sgemm_ directly      -> GFLOP/s
//   Conv2D/...         Conv2D forward / backward at the W2 shapes (if src/nn/conv2d.hpp exists)
//   CifarConv/...      each pass of cnn_playerfl_cifar's five convolutions at batch 32 -> GFLOP/s, peak_share
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
//   PaperStep/...      a training step of cnn_playerfl_cifar (batch 32) and transformer_playerfl (d = 768,
//                      batch 8), as bench/torch_steps.py runs them -> GFLOP/s, peak_share
//   TransformerGemm/... the transformer_playerfl GEMM shapes at d = 768, packed (nn/packed_gemm.hpp) and
//                      Eigen's GEBP (nn/gemm.hpp) -> GFLOP/s, peak_share
//   TransformerLayer/... its self-attention and feed-forward layers, forward + backward -> GFLOP/s
//
// bench/ab_baseline.sh builds this file against another source tree (e.g. the commit before an
// optimisation, with -DFEDSILO_BENCH_BASELINE) and runs both binaries alternately.
//
// FLOP counts: 2 per multiply-add of the products only. Counters are rates over CPU time (the
// default of Google Benchmark): on the shared build machine wall time includes other jobs.
//
// Files: dense_bench.cpp, conv_bench.cpp, step_bench.cpp, optim_bench.cpp, fl_bench.cpp (the groups
// above, by topic), bench_common.hpp (what they share); this file has main().
#include <benchmark/benchmark.h>
#include <mpi.h>

#include "bench_common.hpp"
#include "comm/communicator.hpp"
#include "core/malloc_counter.hpp"  // replaces malloc: in this translation unit only

extern "C" {
void openblas_set_num_threads(int);
char* openblas_get_corename(void);
}

namespace fedsilo::bench {
void startCountingAllocations() { MallocCounter::start(); }
long stopCountingAllocations() { return MallocCounter::stop(); }
}  // namespace fedsilo::bench

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
