// The federation's per-round pieces (bench_main.cpp: the groups ExactSum/, ReduceExact/, Hdf5/).
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "bench_common.hpp"
#include "comm/communicator.hpp"
#include "comm/placement.hpp"
#include "core/exact_sum.hpp"
#include "io/results_writer.hpp"

namespace {

using namespace fedsilo;
using namespace fedsilo::bench;

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
