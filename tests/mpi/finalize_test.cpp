// What MPI_Finalize leaves behind, at 1, 2 and 4 ranks: after MpiEnvironment ends, the exact sums'
// datatype and op are freed and no Communicator still owns a communicator. The check must run after
// MPI_Finalize, so this file has its own main() instead of the MPI gtest main (which finalises last).
#include <cstdio>

#include "comm/communicator.hpp"
#include "comm/mpi_handle.hpp"

using namespace fedsilo;

int main(int argc, char** argv) {
  int failures = 0;
  auto expect = [&](bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "test_mpi_finalize: FAILED: %s\n", what);
    ++failures;
  };
  expect(!detail::exactSumTypeCommitted(), "no exact-sum datatype before MPI is initialised");
  {
    MpiEnvironment env(argc, argv);
    Communicator comm = Communicator::world();
    ExactSum sum(3);
    sum.add(1, 0.5);
    comm.reduceExact(sum, 0);
    comm.allreduceExact(sum);
    expect(detail::exactSumTypeCommitted(), "the exact reductions committed their datatype and op");
    expect(detail::ownedCommunicators() == 1, "world() owns one duplicated communicator");
  }
  expect(!detail::exactSumTypeCommitted(), "MPI_Finalize freed the exact-sum datatype and op");
  expect(detail::ownedCommunicators() == 0, "every duplicated communicator was freed by its owner");
  if (failures == 0) std::printf("test_mpi_finalize: passed\n");
  return failures == 0 ? 0 : 1;
}
